#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: Conv returns an output of the wrong shape or type (with pads, strides) — StridesOptimization moves the stride of a 1x1 Conv with non-zero pads up through an elementwise producer: wrong shape (or, with one-sided pads, wrong values)
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found
#
# The ONNX specification, Conv-11 (https://onnx.ai/onnx/operators/onnx__Conv.html#conv-11):
#   | The convolution operator consumes an input tensor and a filter, and
#   | computes the output.
#   pads=[1, 1, 0, 2]: Padding for the beginning and ending along each spatial axis, it can take any value greater than or equal to 0. The value represent the number of pixels added to the beginning and end part of the corresponding axis. `pads` format should be as follow [x1_begin, x2_begin...x1_end, x2_end,...], where xi_begin the number of pixels added at the beginning of axis `i` and xi_end, the number of pixels added at the end of axis `i`. This attribute cannot be used simultaneously with auto_pad attribute. If not present, the padding defaults to 0 along start and end of each spatial axis.
#   strides=[2, 3]: Stride along each spatial axis. If not present, the stride defaults is 1 along each spatial axis.
#
# What goes wrong: (as recorded at mode=performance-no-snippets) outputs differ from the reference in shape, dtype or presence (no values compared)
#   first diverging node: node 'Conv_8' (Conv), output 'v24' [differs only with its inputs kept internal: fusion?]: shape differs: expected float32[1, 1, 1, 2], got float32[1, 1, 2, 4]
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_375 (opset 17, 2 nodes)
#     input  x23: float32[1, 1, 1, 1]
#     input  v20: float32[1, 1, 1, 1]
#     v21 = Relu(v20)
#     v24 = Conv(v21, x23) {pads=[1, 1, 0, 2], strides=[2, 3]}
#     output v24: float32[1, 1, 1, 2]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/a5dc700183419430/ --backend openvino
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
    "x23": np.array([0], dtype=np.float32).reshape([1, 1, 1, 1]),
    "v20": np.array([0], dtype=np.float32).reshape([1, 1, 1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v24", np.array([0, 0], dtype=np.float32).reshape([1, 1, 1, 2])),
]
OUTPUT_NAMES = [name for name, _ in EXPECTED]
RTOL, ATOL = 0.001, 0.0001


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
