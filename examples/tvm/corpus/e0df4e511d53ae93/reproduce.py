#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# tvm 0.27.0.post1: Dropout returns an output of the wrong shape or type — Dropout's mask output is float, not bool
# tvm 0.27.0.post1, Python 3.11.2, numpy 2.4.6; configuration pipeline=default
# Upstream: none found (the mask came in apache/tvm#19841)
#
# The ONNX specification, Dropout-13 (https://onnx.ai/onnx/operators/onnx__Dropout.html#dropout-13):
#   | Dropout takes an input floating-point tensor, an optional input ratio (floating-point scalar) and an optional input training_mode (boolean scalar). It produces two tensor outputs,
#   | output (floating-point tensor) and mask (optional `Tensor<bool>`). If `training_mode` is true then the output Y will be a random dropout;
#   | Note that this Dropout scales the masked input data by the following equation, so to convert the trained model into inference mode,
#   | the user can simply not pass `training_mode` input or set it to false.
#   | ```
#   | output = scale * data * mask,
#   | ```
#   | where
#   | ```
#   | scale = 1. / (1. - ratio).
#   | ```
#   | This operator has **optional** inputs/outputs. See [the doc](IR.md) for more details about the representation of optional arguments. An empty string may be used in the place of an actual argument's name to indicate a missing argument. Trailing optional arguments (those not followed by an argument that is present) may also be simply omitted.
#
# What goes wrong: (as recorded at pipeline=full) outputs differ from the reference in shape, dtype or presence (no values compared)
#   first diverging node: node 'Dropout_10' (Dropout), output 'v16': dtype differs: expected bool[1], got float32[1]
# Configurations: fails at pipeline=default (mismatch), pipeline=full (mismatch), pipeline=zero (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_23 (opset 17, 1 nodes)
#     input  v4: float32[1]
#     v15, v16 = Dropout(v4)
#     output v16: bool[1]
#
# Needs: pip install apache-tvm==0.27.0.post1 onnx==1.23.2 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/tvm/corpus/e0df4e511d53ae93 --backend tvm
import os
import sys

import numpy as np

# --- the engine, alone ---
from typing import Any

import onnx
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def run(model_path, feeds):
    model = onnx.load(model_path)
    mod = from_onnx(model, opset=model.opset_import[0].version)
    mod = relax.transform.DecomposeOpsForInference()(mod)
    target = tvm.target.Target("llvm")
    with target:
        for p in []:  # pipeline=default
            mod = p(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    names = [i.name for i in model.graph.input if i.name in feeds]
    return flatten(vm["main"](*[tvm.runtime.tensor(feeds[n], tvm.cpu()) for n in names]))


def flatten(value: Any) -> list[np.ndarray]:
    """The VM's result as arrays: a tensor, a shape (ONNX Shape's int64 tensor), or a tuple of
    them (nested)."""
    if isinstance(value, tvm.runtime.Tensor):
        return [value.numpy()]
    if isinstance(value, tvm.runtime.ShapeTuple):
        return [np.array(list(value), dtype=np.int64)]
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__"):
        return [a for v in value for a in flatten(v)]
    return [np.asarray(value)]

# --- the case ---
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
FEEDS = {
    "v4": np.array([0], dtype=np.float32).reshape([1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v16", np.array([True], dtype=np.bool_).reshape([1])),
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
