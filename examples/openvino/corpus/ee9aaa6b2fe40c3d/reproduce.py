#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: RNN returns wrong values (with direction, activations, hidden_size) — A bidirectional RNN applies activations[0] in both directions; activations[1], the reverse direction's, is ignored
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found
#
# The ONNX specification, RNN-14 (https://onnx.ai/onnx/operators/onnx__RNN.html#rnn-14):
#   | Computes an one-layer simple RNN. This operator is usually supported
#   | via some custom implementation such as CuDNN.
#   direction="bidirectional": Specify if the RNN is forward, reverse, or bidirectional. Must be one of forward (default), reverse, or bidirectional.
#   activations=["Relu", "Softsign"]: One (or two if bidirectional) activation function for input gate. The activation function must be one of the activation functions specified above. Optional: Default `Tanh` if not specified.
#   hidden_size=1: Number of neurons in the hidden layer
#
# What goes wrong: (as recorded at mode=performance) outputs differ from the reference (worst abs error 0.5, worst rel error 1; tolerance rtol=0.001 atol=0.0001; a correct engine's float error there is estimated at 4.76837e-07 at most)
#   first diverging node: node 'RNN_4' (RNN), output 'v11': 1 of 2 elements differ beyond rtol=0.001 atol=0.0001; max abs error 0.5, max rel error 1; first at [0, 1, 0, 0]: got 1, expected 0.5
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_1066 (opset 17, 1 nodes)
#     input  x9: float32[2, 1, 1]
#     input  x10: float32[2, 1, 1]
#     input  x0: float32[1, 1, 1]
#     v11, v12 = RNN(x0, x9, x10) {direction="bidirectional", activations=["Relu", "Softsign"], hidden_size=1}
#     output v12: float32[2, 1, 1]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/ee9aaa6b2fe40c3d/ --backend openvino
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
    "x9": np.array([1, 1], dtype=np.float32).reshape([2, 1, 1]),
    "x10": np.array([0, 0], dtype=np.float32).reshape([2, 1, 1]),
    "x0": np.array([1], dtype=np.float32).reshape([1, 1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v12", np.array([1, 0.5], dtype=np.float32).reshape([2, 1, 1])),
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
