#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: ReduceL1 fails on a valid model (with axes, keepdims) — ReduceL1, ReduceLogSum and ReduceLogSumExp at opsets 13 to 17 ignore the axes attribute and reduce every axis
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: https://github.com/openvinotoolkit/openvino/issues/38238 (open; fix in PR #38241, open)
#
# The ONNX specification, ReduceL1-13 (https://onnx.ai/onnx/operators/onnx__ReduceL1.html#reducel1-13):
#   | Computes the L1 norm of the input tensor's element along the provided axes. The resulting
#   | tensor has the same rank as the input if keepdims equals 1. If keepdims equals 0, then
#   | the resulting tensor has the reduced dimension pruned.
#   axes=[0]: A list of integers, along which to reduce. The default is to reduce over all the dimensions of the input tensor. Accepted range is [-r, r-1] where r = rank(data).
#   keepdims=0: Keep the reduced dimension or not, default 1 means keep reduced dimension.
#
# What goes wrong: (as recorded at mode=performance-no-snippets) openvino (mode=performance-no-snippets) failed: openvino (mode=performance-no-snippets): RuntimeError: Exception from src/inference/src/cpp/core.cpp:105: Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp:151: FrontEnd API failed with OpConversionFailure: Model wasn't fully converted. Failed operations detailed log: -- ScatterND-17 with a message: While validating ONNX node '<Node(ScatterND): ScatterND_9>': Check 'indices_rank != 0 && inputs_rank != 0' failed at src/core/shape_inference/include/scatter_nd_base_shape_inference.hpp:25: While validating node 'util::ScatterNDBase ScatterNDBase_15843 (opset4::ReduceL1 ReduceL1_4[0]:i32[], opset1::Constant w22[0]:i64[2,1], opset1::Parameter x23[0]:i32[2,5,3,2]) -> (dynamic[...])' with friendly_name 'ScatterNDBase_15843': Indices rank and inputs_rank are expected to be at least 1
#   first diverging node: node 'ReduceL1_4' (ReduceL1), output 'v14' [differs only with its inputs kept internal: fusion?]: shape differs: expected int32[3, 5, 3, 2], got int32[]
# Configurations: fails at mode=accuracy (error), mode=performance (error), mode=performance-no-snippets (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_56 (opset 17, 2 nodes)
#     input  x23: int32[2, 5, 3, 2]
#     input  v9: int32[1, 3, 5, 3, 2]
#     init   w22: int64[2, 1] {0, 2}
#     v14 = ReduceL1(v9) {axes=[0], keepdims=0}
#     v24 = ScatterND(v14, w22, x23)
#     output v24: int32[3, 5, 3, 2]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/efa7a604bb5d3c9e/ --backend openvino
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
    "x23": np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int32).reshape([2, 5, 3, 2]),
    "v9": np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0], dtype=np.int32).reshape([1, 3, 5, 3, 2]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v24", np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0], dtype=np.int32).reshape([3, 5, 3, 2])),
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
