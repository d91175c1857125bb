#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# iree 3.13.0: GRU returns wrong values (with hidden_size) — GRU ignores sequence_lens: Y_h is the hidden state after the last time step, not after each sequence's length
# iree 3.13.0, Python 3.11.2, numpy 2.4.6; configuration opt=O0
# Upstream: none found (onnx-mlir#2479 and apache/tvm#13587 fixed the same gap in theirs)
#
# The ONNX specification, GRU-14 (https://onnx.ai/onnx/operators/onnx__GRU.html#gru-14):
#   | Computes an one-layer GRU. This operator is usually supported via some custom
#   | implementation such as CuDNN.
#   hidden_size=1: Number of neurons in the hidden layer
#
# What goes wrong: (as recorded at opt=O3) outputs differ from the reference (worst abs error 0.151002, worst rel error 0.252933; tolerance rtol=0.001 atol=0.0001; a correct engine's float error there is estimated at 1.19209e-06 at most)
#   first diverging node: node 'GRU_4' (GRU), output 'v15': 1 of 2 elements differ beyond rtol=0.001 atol=0.0001; max abs error 0.446002245, max rel error inf; first at [1, 0, 0, 0]: got -0.446002245, expected 0
# Configurations: fails at opt=O0 (mismatch), opt=O1 (mismatch), opt=O2 (mismatch), opt=O3 (mismatch), opt=O3+opt-in (mismatch); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_379 (opset 17, 1 nodes)
#     input  x11: float32[1, 3, 5]
#     input  x12: float32[1, 3, 1]
#     input  x14: float32[1, 1, 1]
#     input  v5: float32[2, 1, 5]
#     init   w13: int32[1] {1}
#     v15, v16 = GRU(v5, x11, x12, -, w13, x14) {hidden_size=1}
#     output v16: float32[1, 1, 1]
#
# Needs: pip install iree-base-compiler[onnx]==3.13.0 iree-base-runtime==3.13.0 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/iree/corpus/467dc921b1b867d5/ --backend iree
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
    "x11": np.array([-0.556811631, -0.0811387151, 0.740506709, 0.498380899, 0.509246647, -0.421332061, 0.868831515, 0.460749239, -0.136430964, -0.545244694, -0.733314157, -0.736930311,
        0.705084383, -0.756660461, -0.560892105], dtype=np.float32).reshape([1, 3, 5]),
    "x12": np.array([0.116786592, -0.839101195, 0.847924709], dtype=np.float32).reshape([1, 3, 1]),
    "x14": np.array([-0.793893814], dtype=np.float32).reshape([1, 1, 1]),
    "v5": np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32).reshape([2, 1, 5]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v16", np.array([-0.597004175], dtype=np.float32).reshape([1, 1, 1])),
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
