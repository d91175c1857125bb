#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# tvm 0.27.0.post1: PRelu fails on a valid model — PRelu of a scalar fails to import (the frontend gives relax.nn.prelu axis -1)
# tvm 0.27.0.post1, Python 3.11.2, numpy 2.4.6; configuration pipeline=default
# Upstream: none found
#
# The ONNX specification, PRelu-16 (https://onnx.ai/onnx/operators/onnx__PRelu.html#prelu-16):
#   | PRelu takes input data (Tensor<T>) and slope tensor as input, and produces one
#   | output data (Tensor<T>) where the function `f(x) = slope * x for x < 0`,
#   | `f(x) = x for x >= 0`., is applied to the data tensor elementwise.
#
# What goes wrong: (as recorded at pipeline=full) tvm (pipeline=full) failed: tvm (pipeline=full): ValueError: In ir.Op(span=None, ty=ir.Type(span=None), name="relax.nn.prelu", description="", arguments=(ir.ArgumentInfo(name="data", type_info="Tensor", description="The input tensor."), ir.ArgumentInfo(name="alpha", type_info="Tensor", description="The channel-wise learnable slope.")), attrs_type_key="relax.attrs.PReluAttrs", num_inputs=2, support_level=10), the input axis -1 is out of range. The input tensor has 0 dimensions, so axis should be in range [0, 0).
# Configurations: fails at pipeline=default (error), pipeline=full (error), pipeline=zero (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_4 (opset 17, 1 nodes)
#     input  v56: float32[]
#     init   v55: float32[] {1}
#     v134 = PRelu(v56, v55)
#     output v134: float32[]
#
# Needs: pip install apache-tvm==0.27.0.post1 onnx==1.23.2 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/tvm/corpus/a463b458b520d4ae --backend tvm
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
    "v56": np.array([0], dtype=np.float32).reshape([]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v134", np.array([0], dtype=np.float32).reshape([])),
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
