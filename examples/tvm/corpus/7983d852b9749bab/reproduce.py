#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# tvm 0.27.0.post1: LayerNormalization returns an output of the wrong shape or type — LayerNormalization's optional Mean and InvStdDev come back as scalars
# tvm 0.27.0.post1, Python 3.11.2, numpy 2.4.6; configuration pipeline=default
# Upstream: none found
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
#
# What goes wrong: (as recorded at pipeline=zero) outputs differ from the reference in shape, dtype or presence (no values compared)
#   first diverging node: node 'LayerNormalization_7' (LayerNormalization), output 'v24': shape differs: expected float32[1], got float32[]
# Configurations: fails at pipeline=default (mismatch), pipeline=full (mismatch), pipeline=zero (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_491 (opset 17, 1 nodes)
#     input  x22: float32[1]
#     input  v21: float32[1]
#     init   v6: float32[1] {0.646072}
#     v23, v24 = LayerNormalization(v21, x22, v6)
#     output v24: float32[1]
#
# Needs: pip install apache-tvm==0.27.0.post1 onnx==1.23.2 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/tvm/corpus/7983d852b9749bab --backend tvm
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
    "x22": np.array([0], dtype=np.float32).reshape([1]),
    "v21": np.array([0], dtype=np.float32).reshape([1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v24", np.array([0], dtype=np.float32).reshape([1])),
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
