#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# iree 3.13.0: GatherND fails on a valid model — A Slice of width 1 on the innermost axis then GatherND fails LLVM translation: a gather on a strided 1-D view is left unlowered
# iree 3.13.0, Python 3.11.2, numpy 2.4.6; configuration opt=O0
# Upstream: llvm/llvm-project PR #189178 (open; same as iree-org/iree#15364 for rank 2, closed)
#
# The ONNX specification, GatherND-13 (https://onnx.ai/onnx/operators/onnx__GatherND.html#gathernd-13):
#   | Given `data` tensor of rank `r` >= 1, `indices` tensor of rank `q` >= 1, and `batch_dims` integer `b`, this operator gathers
#   | slices of `data` into an output tensor of rank `q + r - indices_shape[-1] - 1 - b`.
#
# What goes wrong: (as recorded at opt=O2) iree (opt=O2) failed: iree (opt=O2): RuntimeError: IREE failed to compile the model: <unknown>:0: error: LLVM Translation failed for operation: builtin.unrealized_conversion_cast
# Configurations: fails at opt=O0 (error), opt=O1 (error), opt=O2 (error), opt=O3 (error), opt=O3+opt-in (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_291 (opset 17, 6 nodes)
#     input  v3: int32[4, 4, 9]
#     input  x0: int32[7, 1, 2]
#     input  x51: int32[3, 1, 7, 11]
#     init   s38: int64[6] {1, 2, 2, 0, 1, 0}
#     init   s44: int64[3] {-5, 0, 0}
#     init   s45: int64[3] {4, 1, -1}
#     init   s46: int64[3] {-3, 1, 2}
#     init   s47: int64[3] {1, 2, 1}
#     init   w50: int64[3, 1, 1] {0, 2, 1}
#     init   w60: int64[2, 2] {0, 0, 1, 0}
#     init   x39: int32[] {4}
#     v40 = Pad(v3, s38, x39) {mode="constant"}
#     v48 = Slice(x0, s44, s45, s46, s47)
#     v52 = ScatterND(v40, w50, x51) {reduction="add"}
#     v53 = Transpose(v48) {perm=[0, 1, 2]}
#     v54 = Transpose(v53) {perm=[2, 1, 0]}
#     v61 = GatherND(v53, w60)
#     output v52: int32[5, 7, 11]
#     output v54: int32[1, 1, 2]
#     output v61: int32[2, 1]
#
# Needs: pip install iree-base-compiler[onnx]==3.13.0 iree-base-runtime==3.13.0 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/iree/corpus/f07159a2a4e0e46d --backend iree
import os
import sys

import numpy as np

# --- the engine, alone ---
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import iree.compiler
import iree.runtime as rt


def run(model_path, feeds):
    mlir = tempfile.NamedTemporaryFile(suffix=".mlir").name  # iree-import-onnx's output
    subprocess.run(
        [sys.executable, "-m", "iree.compiler.tools.import_onnx", model_path, "-o", mlir],
        check=True,
    )
    vmfb = iree.compiler.compile_file(mlir, extra_args=['--iree-hal-target-device=local', '--iree-hal-local-target-device-backends=llvm-cpu', '--iree-llvmcpu-target-cpu=host', '--iree-opt-level=O0', '--iree-opt-const-eval=true', '--iree-opt-const-expr-hoisting=true', '--iree-dispatch-creation-fuse-multi-use=true', '--iree-opt-outer-dim-concat=false', '--iree-opt-strip-assertions=false', '--iree-opt-generalize-matmul=false', '--iree-dispatch-creation-enable-aggressive-fusion=false', '--iree-llvmcpu-reassociate-fp-reductions=false', '--iree-opt-aggressively-propagate-transposes=false', '--iree-opt-data-tiling=false', '--iree-dispatch-creation-enable-split-reduction=false', '--iree-flow-enable-pad-handling=false', '--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops=false', '--iree-dispatch-creation-enable-aggressive-reshape-movement=false', '--iree-global-opt-use-im2col-for-convs=false', '--iree-global-opt-propagate-transposes-through-conv=false', '--iree-global-opt-enable-sink-transpose-through-pad=false', '--iree-llvmcpu-loop-vectorization=false', '--iree-llvmcpu-slp-vectorization=false', '--iree-llvmcpu-loop-unrolling=false'])
    context = rt.SystemContext(config=rt.Config("local-sync"))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
    graph = onnx.load(model_path).graph
    function = context.modules.module[graph.name]
    results = function(*[feeds[i.name] for i in graph.input if i.name in feeds])
    results = results if isinstance(results, tuple) else (results,)
    return [np.asarray(r.to_host()) for r in results]

# --- the case ---
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.onnx")
FEEDS = {
    "v3": np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int32).reshape([4, 4, 9]),
    "x0": np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0], dtype=np.int32).reshape([7, 1, 2]),
    "x51": np.array([-5, -4, -4, -4, -5, 0, -3, 2, -3, -2, -4, 0,
        0, -3, -3, -2, -4, 0, -5, -4, 2, 2, -1, 3,
        1, 1, -4, -5, -1, 0, -2, -2, -1, -4, -5, -4,
        0, -4, -5, -5, -4, -4, 0, -5, -5, -4, -4, -5,
        0, -4, -4, -1, 1, -1, -2, -1, 1, 0, -5, -3,
        1, 1, 1, -3, -4, -5, -4, 1, -4, -2, -2, 1,
        1, -5, -3, -3, 0, -1, -3, -5, -2, 4, -2, 3,
        0, -3, -5, -5, -2, 3, -1, -2, -5, 2, -5, -5,
        -2, -1, -1, -4, -2, 0, -4, -2, -3, -5, -4, -5,
        -3, -1, 1, -4, -3, -4, -3, -5, 0, -5, 2, -3,
        3, -4, 2, -5, 2, -2, -5, -4, -3, -3, 4, -3,
        -3, 2, -2, -3, -3, 1, -1, -3, -1, -1, -2, -4,
        1, 4, -3, 2, 0, -5, -3, -1, -3, 0, -4, -1,
        -1, -4, -5, 4, -2, 3, 0, -4, -5, -5, -2, -4,
        -4, -5, -4, -5, -3, 4, -4, -1, -5, 0, -3, -4,
        0, -5, -2, -4, -1, -2, -2, 1, 0, -3, -3, -2,
        -4, -3, 0, -5, -3, -4, 1, 2, -5, -4, 2, -2,
        -2, 1, -2, 2, -3, 3, 4, -2, -4, -1, -4, -2,
        2, -3, -3, -3, -3, -1, -1, -4, -5, 1, -1, -1,
        -3, 0, 4], dtype=np.int32).reshape([3, 1, 7, 11]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v52", np.array([-1, 0, 0, 0, -1, 4, 1, 6, 1, 2, 0, 4,
        4, 1, 1, 2, 0, 4, -1, 0, 6, 6, 3, 7,
        5, 5, 0, -1, 3, 4, 2, 2, 3, 0, -1, 0,
        4, 0, -1, -1, 0, 0, 4, -1, -1, 0, 0, -1,
        4, 0, 0, 3, 5, 3, 2, 3, 5, 4, -1, 1,
        5, 5, 5, 1, 0, -1, 0, 5, 0, 2, 2, 5,
        5, -1, 1, 1, 4, 0, 3, 3, 0, -1, 8, 2,
        7, 4, 0, -1, -1, 2, 0, 0, -1, 0, -1, 1,
        8, 0, 3, -1, 4, -3, -4, 0, -5, -2, -4, -1,
        -2, -2, 5, 4, -3, -3, -2, -4, -3, 0, -5, -3,
        -4, 5, 6, -5, -4, 2, -2, -2, 1, -2, 2, -3,
        7, 8, -2, -4, -1, -4, -2, 2, -3, -3, -3, 1,
        3, 3, 0, -1, 5, 3, 3, 1, 4, 8, 3, 1,
        -1, 2, 8, 2, 7, 4, 1, -1, -1, 2, 7, 3,
        2, -1, 6, -1, -1, 2, 3, 3, 0, 2, 0, -4,
        -2, -3, -5, -4, -5, -3, -1, 5, 0, -3, -4, -3,
        -5, 0, -5, 2, -3, 3, 0, 6, -5, 2, -2, -5,
        -4, -3, -3, 4, -3, 1, 6, -2, -3, -3, 1, -1,
        -3, -1, -1, -2, 0, 5, 8, 1, 6, 4, -1, 1,
        3, 1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4,
        4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 4, 4, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4], dtype=np.int32).reshape([5, 7, 11])),
    ("v54", np.array([0, 0], dtype=np.int32).reshape([1, 1, 2])),
    ("v61", np.array([0, 0], dtype=np.int32).reshape([2, 1])),
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
