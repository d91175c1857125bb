#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# tvm 0.27.0.post1: Pow fails on a valid model — Pow with a float base and an integer exponent fails to import (binary operators must have one dtype)
# tvm 0.27.0.post1, Python 3.11.2, numpy 2.4.6; configuration pipeline=default
# Upstream: https://github.com/apache/tvm/issues/15718 (mixed dtypes; closed in 2023, still failing in 0.27)
#
# The ONNX specification, Pow-15 (https://onnx.ai/onnx/operators/onnx__Pow.html#pow-15):
#   | Pow takes input data (Tensor<T>) and exponent Tensor, and
#   | produces one output data (Tensor<T>) where the function `f(x) = x^exponent`,
#   | is applied to the data tensor elementwise.
#   | This operator supports **multidirectional (i.e., Numpy-style) broadcasting**; for more details please check [the doc](Broadcasting.md).
#
# What goes wrong: tvm (pipeline=default) failed: tvm (pipeline=default): TypeError: Binary operators must have the same datatype for both operands.  However, R.power(v3, metadata["ir.GenericConst"][0])
# Configurations: fails at pipeline=default (error), pipeline=full (error), pipeline=zero (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_1 (opset 17, 1 nodes)
#     input  v3: float32[1]
#     init   w109: int64[1] {-4}
#     v110 = Pow(v3, w109)
#     output v110: float32[1]
#
# Needs: pip install apache-tvm==0.27.0.post1 onnx==1.23.2 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/tvm/corpus/948d3b7403dc452c --backend tvm
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
    "v3": np.array([1], dtype=np.float32).reshape([1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v110", np.array([1], dtype=np.float32).reshape([1])),
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
