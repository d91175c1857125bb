#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# openvino 2026.4.1: Tile fails on a valid model — Tile of a scalar with an empty repeats fails to convert ('Tile repeats must be of rank 1'): the frontend reads a zero-element initializer as a scalar 0
# openvino 2026.4.1, Python 3.11.2, numpy 2.4.6; configuration mode=accuracy
# Upstream: https://github.com/openvinotoolkit/openvino/issues/37958 (open; fix in PR #38002, open)
#
# The ONNX specification, Tile-13 (https://onnx.ai/onnx/operators/onnx__Tile.html#tile-13):
#   | Constructs a tensor by tiling a given tensor.
#   | This is the same as function `tile` in Numpy, but no broadcast.
#   | For example A = [[1, 2], [3, 4]], B = [1, 2], tile(A, B) = [[1, 2, 1, 2], [3, 4, 3, 4]]
#
# What goes wrong: (as recorded at mode=performance-no-snippets) openvino (mode=performance-no-snippets) failed: openvino (mode=performance-no-snippets): RuntimeError: Exception from src/inference/src/cpp/core.cpp:105: Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp:151: FrontEnd API failed with OpConversionFailure: Model wasn't fully converted. Failed operations detailed log: -- Tile-17 with a message: While validating ONNX node '<Node(Tile): Tile_9>': Check 'repeats_rank.compatible(1)' failed at src/core/shape_inference/include/tile_shape_inference.hpp:34: While validating node 'opset1::Tile Tile_15833 (opset1::Constant w119[0]:boolean[], opset1::Convert Convert_15832[0]:i64[]) -> (dynamic[...])' with friendly_name 'Tile_15833': Tile repeats must be of rank 1
# Configurations: fails at mode=accuracy (error), mode=performance (error), mode=performance-no-snippets (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_1018 (opset 17, 1 nodes)
#     init   w119: bool[] {0}
#     init   s120: int64[0] {}
#     w42 = Tile(w119, s120)
#     output w42: bool[]
#
# Needs: pip install openvino==2026.4.1 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/openvino/corpus/f0dcea6fbbaf33a5/ --backend openvino
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
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("w42", np.array([False], dtype=np.bool_).reshape([])),
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
