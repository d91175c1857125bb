#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# inductor 2.15.0: Gemm fails on a valid model after weight_prepack
# inductor 2.15.0, Python 3.11.2, numpy 2.4.6; configuration mode=freezing
#
# The ONNX specification, Gemm-13 (https://onnx.ai/onnx/operators/onnx__Gemm.html#gemm-13):
#   | General Matrix multiplication:
#   | https://en.wikipedia.org/wiki/Basic_Linear_Algebra_Subprograms#Level_3
#
# What goes wrong: inductor (mode=freezing) failed: inductor (mode=freezing): BackendCompilerFailed: backend='inductor' raised: RuntimeError: reorder_linear_weight: weight's dtype should be float
# Configurations: fails at mode=freezing (error); passes at mode=aot_eager, mode=dynamic, mode=eager, mode=inductor, mode=max-autotune: passes at mode=eager: a bug of the optimizing configurations
# Culprit: fails with only weight_prepack enabled; passes with it disabled; workaround: the configuration mode=freezing,disable=weight_prepack
#
# The model (model.onnx, beside this script):
#   graph nncheck_17 (opset 17, 1 nodes)
#     input  v6: int64[1, 1]
#     init   w10: int64[1, 2] {0, 1}
#     v11 = Gemm(v6, w10)
#     output v11: int64[1, 2]
#
# Needs: pip install torch==2.15.0 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/inductor/corpus/2dd5d8e821240b45 --backend inductor
import os
import sys

import numpy as np

# --- the engine, alone ---
import torch
from torch import Tensor


# The ONNX model in PyTorch, written by nncheck op by op with ONNX's semantics.
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # the initializer w10
        self.register_buffer("w0", torch.from_numpy(np.array([0, 1], dtype=np.int64).reshape([1, 2])))

    def forward(self, a0: Tensor):
        _t0 = torch.nan_to_num(torch.mm(a0, self.w0).to(torch.float64) * 1.0, 0.0)
        v0 = torch.where(_t0 >= 9223372036854775807.0, 9223372036854775807, torch.where(_t0 <= -9223372036854775807.0, (-9223372036854775807 - 1), _t0.to(torch.int64)))
        return (v0, )


INPUTS = ["v6"]



def run(model_path, feeds):  # PyTorch reads no ONNX: Model above is the model
    torch._inductor.config.freezing = True
    model = Model().eval()
    compiled = torch.compile(model, backend='inductor', fullgraph=True)
    with torch.no_grad():
        outputs = compiled(*[torch.from_numpy(feeds[name]) for name in INPUTS])
    return [output.numpy() for output in outputs]

# --- the case ---
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
FEEDS = {
    "v6": np.array([0], dtype=np.int64).reshape([1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v11", np.array([0, 0], dtype=np.int64).reshape([1, 2])),
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
