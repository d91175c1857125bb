#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: LSTM returns wrong values (with hidden_size) — LSTM's peephole input P is ignored (imported as LSTMSequence, which has none)
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: none found (OpenVINO's own ONNX test list expects test_lstm_with_peepholes to fail: xfail_issue_113506)
#
# The ONNX specification, LSTM-14 (https://onnx.ai/onnx/operators/onnx__LSTM.html#lstm-14):
#   | Computes an one-layer LSTM. This operator is usually supported via some
#   | custom implementation such as CuDNN.
#   hidden_size=1: Number of neurons in the hidden layer
#
# What goes wrong: (as recorded at mode=performance-no-snippets) outputs differ from the reference (worst abs error 0.231059, worst rel error 0.31606; tolerance rtol=0.001 atol=0.0001; a correct engine's float error there is estimated at 1.19209e-06 at most)
#   first diverging node: node 'LSTM_10' (LSTM), output 'v47': 1 of 1 elements differ beyond rtol=0.001 atol=0.0001; max abs error 0.189970806, max rel error 0.451205572; first at [0, 0, 0, 0]: got 0.231058583, expected 0.421029389
# Configurations: fails at mode=accuracy (mismatch), mode=performance (mismatch), mode=performance-no-snippets (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_374 (opset 17, 1 nodes)
#     input  x41: float32[1, 4, 1]
#     input  x42: float32[1, 4, 1]
#     input  x43: float32[1, 8]
#     input  x45: float32[1, 1, 1]
#     input  x46: float32[1, 3]
#     input  v34: float32[1, 1, 1]
#     init   w44: int32[1] {1}
#     v47, v48, v49 = LSTM(v34, x41, x42, x43, w44, -, x45, x46) {hidden_size=1}
#     output v49: float32[1, 1, 1]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/1ff83076e8d7a55e/ --backend openvino
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
    "x41": np.array([0, 0, 0, 0], dtype=np.float32).reshape([1, 4, 1]),
    "x42": np.array([0, 0, 0, 0], dtype=np.float32).reshape([1, 4, 1]),
    "x43": np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32).reshape([1, 8]),
    "x45": np.array([1], dtype=np.float32).reshape([1, 1, 1]),
    "x46": np.array([1, 1, 1], dtype=np.float32).reshape([1, 3]),
    "v34": np.array([0], dtype=np.float32).reshape([1, 1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v49", np.array([0.731058598], dtype=np.float32).reshape([1, 1, 1])),
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
