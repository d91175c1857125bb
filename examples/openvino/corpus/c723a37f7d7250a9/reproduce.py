#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: Cast fails on a valid model (with to) — An output of Split with explicit sizes (VariadicSplit) cast to bool fails to compile on CPU ('Default output not supported')
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: related: https://github.com/openvinotoolkit/openvino/issues/33216 (closed; the same message from VariadicSplit, still failing in 2026.4.1)
#
# The ONNX specification, Cast-13 (https://onnx.ai/onnx/operators/onnx__Cast.html#cast-13):
#   | The operator casts the elements of a given input tensor to a data type
#   | specified by the 'to' argument and returns an output tensor of the same size in
#   | the converted type. The 'to' argument must be one of the data types specified
#   | in the 'DataType' enum field in the TensorProto message.
#   to=9: The data type to which the elements of the input tensor are cast. Strictly must be one of the types from DataType enum in TensorProto
#
# What goes wrong: (as recorded at mode=performance) openvino (mode=performance) failed: openvino (mode=performance): RuntimeError: Exception from src/inference/src/cpp/core.cpp:117: Exception from src/inference/src/dev/plugin.cpp:54: Check 'false' failed at src/core/src/node.cpp:150: While validating node 'opset1::VariadicSplit Split_5 (opset1::Parameter v8[0]:f32[3], opset1::Constant Constant_15833[0]:i32[], opset1::Constant w10[0]:i32[3]) -> (f32[1], f32[1], f32[1])' with friendly_name 'Split_5': Default output not supported
# Configurations: fails at mode=accuracy (error), mode=performance (error), mode=performance-no-snippets (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_596 (opset 17, 3 nodes)
#     input  v8: float32[3]
#     init   w10: int64[3] {1, 1, 1}
#     v9 = Sign(v8)
#     v11, v12, v13 = Split(v8, w10)
#     v18 = Cast(v13) {to=9}
#     output v9: float32[3]
#     output v18: bool[1]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/c723a37f7d7250a9 --backend openvino
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
    "v8": np.array([1, 1, 1], dtype=np.float32).reshape([3]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v9", np.array([1, 1, 1], dtype=np.float32).reshape([3])),
    ("v18", np.array([True], dtype=np.bool_).reshape([1])),
]
OUTPUT_NAMES = [name for name, _ in EXPECTED]
RTOL, ATOL = 0.001, 9.9999999999999995e-08


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
