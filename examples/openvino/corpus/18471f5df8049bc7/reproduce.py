#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: Div returns an output of the wrong shape or type — RMSFusion rewrites x / Sqrt(ReduceMean(x^2, keepdims=0) + eps), which broadcasts the reduced vector along the last axis, as an RMS normalization: wrong shape or values
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found (ONNX Runtime fixed the same rewrite: microsoft/onnxruntime#31144)
#
# The ONNX specification, Div-14 (https://onnx.ai/onnx/operators/onnx__Div.html#div-14):
#   | Performs element-wise binary division (with Numpy-style broadcasting support).
#
# What goes wrong: (as recorded at mode=performance-no-snippets) outputs differ from the reference in shape, dtype or presence (no values compared)
#   first diverging node: node 'Div_6' (Div), output 'v9': shape differs: expected float32[2, 2], got float32[2, 1]
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_305 (opset 17, 5 nodes)
#     input  v2: float32[2, 1]
#     init   w3: float32[] {2}
#     init   w6: float32[] {0.02001}
#     v4 = Pow(v2, w3)
#     v5 = ReduceMean(v4) {axes=[-1], keepdims=0}
#     v7 = Add(v5, w6)
#     v8 = Sqrt(v7)
#     v9 = Div(v2, v8)
#     output v9: float32[2, 2]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/18471f5df8049bc7/ --backend openvino
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
    "v2": np.array([0, 0], dtype=np.float32).reshape([2, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v9", np.array([0, 0, 0, 0], dtype=np.float32).reshape([2, 2])),
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
