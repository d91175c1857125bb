#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: Resize returns wrong values (with mode) — Resize by scales treats an axis as unchanged when floor(length * scale) == length, ignoring its scale (scale 1.3 on [100, 200], half_pixel: [100, 200], not [100, 165.38] as ONNX's Resize-19 example gives)
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found
#
# The ONNX specification, Resize-13 (https://onnx.ai/onnx/operators/onnx__Resize.html#resize-13):
#   | Resize the input tensor. In general, it calculates every value in the output tensor as a weighted average of neighborhood (a.k.a. sampling locations) in the input tensor.
#   | Each dimension value of the output tensor is:
#   |   output_dimension = floor(input_dimension * (roi_end - roi_start) * scale) if input \"sizes\" is not specified.
#   mode="linear": Three interpolation modes: nearest (default), linear and cubic. The "linear" mode includes linear interpolation for 1D tensor and N-linear interpolation for N-D tensor (for example, bilinear interpolation for 2D tensor). The "cubic" mode includes cubic interpolation for 1D tensor and N-cubic interpolation for N-D tensor (for example, bicubic interpolation for 2D tensor).
#
# What goes wrong: (as recorded at mode=performance-no-snippets) outputs differ from the reference (worst abs error 0.0365318, worst rel error 0.0704779; tolerance rtol=0.001 atol=1e-05; a correct engine's float error there is estimated at 4.76837e-07 at most)
#   first diverging node: node 'Resize_3' (Resize), output 'v7': 1 of 2 elements differ beyond rtol=0.001 atol=1e-05; max abs error 0.036531806, max rel error 0.0704778715; first at [0, 0, 1, 0]: got 0.554876149, expected 0.518344343
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_963 (opset 17, 1 nodes)
#     input  v5: float32[1, 1, 2, 2]
#     init   s6: float32[4] {1, 1, 1.25, 0.5}
#     v7 = Resize(v5, -, s6) {mode="linear"}
#     output v7: float32[1, 1, 2, 1]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/eb7284186010be61/ --backend openvino
import os
import sys

import numpy as np

# --- the engine, alone ---
import numpy as np
import openvino as ov


def run(model_path, feeds):
    compiled = ov.Core().compile_model(model_path, "CPU", {'INFERENCE_NUM_THREADS': 1, 'NUM_STREAMS': 1, 'ENABLE_CPU_PINNING': False, 'EXECUTION_MODE_HINT': 'ACCURACY'})
    # Inputs by name; by position if OpenVINO renamed one (a graph input that is a graph
    # output as is takes the output's name).
    names = [next((n for n in feeds if n in i.get_names()), None) for i in compiled.inputs]
    if None in names:
        names = list(feeds)
    results = compiled.create_infer_request().infer([feeds[n] for n in names])
    return [np.array(results[output]) for output in compiled.outputs]

# --- the case ---
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
FEEDS = {
    "v5": np.array([0.514517903, 0.351689279, 0.691398501, 0.418353766], dtype=np.float32).reshape([1, 1, 2, 2]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v7", np.array([0.433103591, 0.518344343], dtype=np.float32).reshape([1, 1, 2, 1])),
]
OUTPUT_NAMES = [name for name, _ in EXPECTED]
RTOL, ATOL = 0.001, 1.0000000000000001e-05


def differs(got, want):
    """None when `got` is `want` within the tolerance (NaN where NaN), else how it differs."""
    got = np.asarray(got)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "fc":
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.abs(g - w) <= ATOL + RTOL * np.abs(w)) | (np.isnan(g) & np.isnan(w))
    else:
        same = got == want
    bad = np.flatnonzero(~np.asarray(same).reshape(-1))
    if bad.size == 0:
        return None
    at = np.unravel_index(bad[0], want.shape)
    return (f"{bad.size} of {want.size} elements differ beyond rtol={RTOL} atol={ATOL}; "
            f"first at {[int(i) for i in at]}: got {got[at]}, expected {want[at]}")


def main():
    try:
        outputs = run(MODEL, FEEDS)
    except Exception as e:  # the engine fails on a valid model
        print(f"FAILS: the engine raised {type(e).__name__}: {e}")
        return 1
    if len(outputs) != len(EXPECTED):
        print(f"FAILS: {len(outputs)} outputs, expected {len(EXPECTED)}")
        return 1
    failed = False
    for (name, want), got in zip(EXPECTED, outputs):
        got = np.asarray(got)
        why = differs(got, want)
        print(f"output {name}: {'MISMATCH: ' + why if why else 'OK'}")
        if want.size <= 32:
            print(f"  expected {want.dtype}{list(want.shape)}: {want.reshape(-1).tolist()}")
            print(f"  got      {got.dtype}{list(got.shape)}: {got.reshape(-1).tolist()}")
        failed = failed or why is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
