#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: BatchNormalization returns wrong values — A rank-3 Reduce over the last axis with a per-channel Add or Mul fused after it applies the constant along the batch axis (N > 1): here LayerNormalization's Mean before BatchNormalization
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found (related: openvinotoolkit/openvino#23616, closed, the [1, C] case fixed by PR #23970)
#
# The ONNX specification, BatchNormalization-15 (https://onnx.ai/onnx/operators/onnx__BatchNormalization.html#batchnormalization-15):
#   | Carries out batch normalization as described in the paper
#   | https://arxiv.org/abs/1502.03167. Depending on the mode it is being run,
#   | There are five required inputs 'X', 'scale', 'B', 'input_mean' and
#   | 'input_var'.
#   | Note that 'input_mean' and 'input_var' are expected to be the estimated
#   | statistics in inference mode (training_mode=False, default),
#   | and the running statistics in training mode (training_mode=True).
#   | There are multiple cases for the number of outputs, which we list below:
#
# What goes wrong: outputs differ from the reference (worst abs error 0.522102, worst rel error 0.578197; tolerance rtol=0.001 atol=1e-05; a correct engine's float error there is estimated at 2.86102e-06 at most)
#   first diverging node: node 'BatchNormalization_6' (BatchNormalization), output 'v17' [differs only with its inputs kept internal: fusion?]: 2 of 4 elements differ beyond rtol=0.001 atol=1e-05; max abs error 0.522101939, max rel error 0.578196514; first at [0, 1, 0]: got 0.788347125, expected 0.499524057
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_629 (opset 17, 2 nodes)
#     input  x0: float32[2, 2, 1]
#     input  x1: float32[1]
#     input  x2: float32[1]
#     input  x13: float32[2]
#     input  x14: float32[2]
#     init   w15: float32[2] {-0.881618, -0.558624}
#     init   w16: float32[2] {0.382708, 1.25061}
#     v3, v4, v5 = LayerNormalization(x0, x1, x2)
#     v17 = BatchNormalization(v4, x13, x14, w15, w16)
#     output v17: float32[2, 2, 1]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/3397cbfd9f701877/ --backend openvino
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
    "x0": np.array([0, 0, 0, 0], dtype=np.float32).reshape([2, 2, 1]),
    "x1": np.array([0], dtype=np.float32).reshape([1]),
    "x2": np.array([0], dtype=np.float32).reshape([1]),
    "x13": np.array([1, 1], dtype=np.float32).reshape([2]),
    "x14": np.array([0, 0], dtype=np.float32).reshape([2]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v17", np.array([1.42508554, 0.499524057, 1.42508554, 0.499524057], dtype=np.float32).reshape([2, 2, 1])),
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
