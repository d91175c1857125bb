#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: LayerNormalization fails on a valid model (with axis) — LayerNormalization fails to convert when Scale or B has a lower rank than the normalized shape X.shape[axis:] (it reshapes them to that shape instead of broadcasting)
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found (the reshape came with openvinotoolkit/openvino PR #32630, the fix of #30826)
#
# The ONNX specification, LayerNormalization-17 (https://onnx.ai/onnx/operators/onnx__LayerNormalization.html#layernormalization-17):
#   | This is layer normalization defined in ONNX as function.
#   |       The overall computation can be split into two stages.
#   |       The first stage is standardization, which makes the
#   |       normalized elements have zero mean and unit variances.
#   |       The computation required by standardization can be
#   |       described by the following equations.
#   |       ```
#   |       Mean = ReduceMean<axes=normalized_axes>(X)
#   |       D = Sub(X, Mean)
#   |       DD = Mul(Diff, Diff)
#   |       Var = ReduceMean<axes=normalized_axes>(DD)
#   |       VarEps = Add(Var, epsilon)
#   |       StdDev = Sqrt(VarEps)
#   |       InvStdDev = Reciprocal(StdDev)
#   |       Normalized = Mul(D, InvStdDev)
#   |       ```
#   |       where `normalized_axes` is `[axis, ..., rank of X - 1]`.
#   |       The variables `Var` and `StdDev` stand for variance and
#   |       standard deviation, respectively. The second output is
#   |       `Mean` and the last one is `InvStdDev`.
#   |       Depending on `stash_type` attribute, the actual computation
#   |       must happen in different floating-point precision.
#   |       For example, if `stash_type` is 1, this operator casts
#   |       all input variables to 32-bit float, perform the computation, and
#   |       finally cast `Normalized` back to the original type of `X`.
#   |       The second stage then scales and shifts the outcome of the
#   |       first stage using
#   |       ```
#   |       NormalizedScaled = Mul(Normalized, Scale)
#   |       Y = Add(NormalizedScaled, B)
#   |       ```
#   |       The second stage doesn't depends on `stash_type`.
#   |       All equations are in [this syntax](https://github.com/onnx/onnx/blob/main/docs/Syntax.md).
#   |       The same variable (i.e., input, output, and attribute) uses
#   |       the same name in the equations above and this operator's definition.
#   |       Let `d[i]` indicate the i-th dimension of `X`.
#   |       If `X`'s shape is `[d[0], ..., d[axis-1], d[axis], ..., d[rank-1]]`,
#   |       the shape of `Mean` and `InvStdDev` is `[d[0], ..., d[axis-1], 1, ..., 1]`.
#   |       `Y` and `X` have the same shape.
#   axis=-2: The first normalization dimension. If rank(X) is r, axis' allowed range is [-r, r]. Negative value means counting dimensions from the back.
#
# What goes wrong: openvino (mode=accuracy) failed: openvino (mode=accuracy): RuntimeError: Exception from src/inference/src/cpp/core.cpp:105: Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp:151: FrontEnd API failed with OpConversionFailure: Model wasn't fully converted. Failed operations detailed log: -- LayerNormalization-17 with a message: While validating ONNX node '<Node(LayerNormalization): LayerNormalization_13>': Check 'backward_compatible_check || in_out_elements_equal' failed at src/core/shape_inference/include/reshape_shape_inference.hpp:360: While validating node 'opset1::Reshape Reshape_15843 (opset1::Parameter x24[0]:f32[1], opset8::Slice Slice_15841[0]:i64[2]) -> (dynamic[...])' with friendly_name 'Reshape_15843': Shape inference input shapes {[1],[2]}
# Configurations: fails at mode=accuracy (error), mode=performance (error), mode=performance-no-snippets (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_1326 (opset 17, 1 nodes)
#     input  x24: float32[1]
#     input  v2: float32[2, 1]
#     v25, v26, v27 = LayerNormalization(v2, x24) {axis=-2}
#     output v27: float32[1, 1]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/ed01d847e72ca962/ --backend openvino
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
    "x24": np.array([0], dtype=np.float32).reshape([1]),
    "v2": np.array([0, 0], dtype=np.float32).reshape([2, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v27", np.array([316.227783], dtype=np.float32).reshape([1, 1])),
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
