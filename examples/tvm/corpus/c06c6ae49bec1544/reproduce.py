#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# tvm 0.27.0.post1: Gemm returns wrong values (with alpha) — Not a bug of TVM: integer Gemm with a fractional alpha, which ONNX's spec does not define (nncheck's reference scales in floating point and truncates; TVM gives another integer)
# tvm 0.27.0.post1, Python 3.11.2, numpy 2.4.6; configuration pipeline=default
# Upstream: none: the spec is silent
#
# The ONNX specification, Gemm-13 (https://onnx.ai/onnx/operators/onnx__Gemm.html#gemm-13):
#   | General Matrix multiplication:
#   | https://en.wikipedia.org/wiki/Basic_Linear_Algebra_Subprograms#Level_3
#   alpha=1.74435: Scalar multiplier for the product of input tensors A * B.
#
# What goes wrong: (as recorded at pipeline=zero) outputs differ from the reference (worst abs error 1, worst rel error 0.333333; tolerance rtol=0.001 atol=1e-05; a correct engine's float error there is estimated at 0 at most)
#   first diverging node: node 'Gemm_8' (Gemm), output 'v43': 1 of 1 elements differ; max abs error 1, max rel error 0.333333333; first at [0, 0]: got 2, expected 3
# Configurations: fails at pipeline=default (mismatch), pipeline=full (mismatch), pipeline=zero (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_80 (opset 17, 1 nodes)
#     input  x42: int64[1, 1]
#     input  v5: int64[1, 1]
#     v43 = Gemm(v5, x42) {alpha=1.74435}
#     output v43: int64[1, 1]
#
# Needs: pip install apache-tvm==0.27.0.post1 onnx==1.23.2 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/tvm/corpus/c06c6ae49bec1544 --backend tvm
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
    "x42": np.array([2], dtype=np.int64).reshape([1, 1]),
    "v5": np.array([1], dtype=np.int64).reshape([1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v43", np.array([3], dtype=np.int64).reshape([1, 1])),
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
