#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# iree 3.13.0: Shape fails on a valid model — The ONNX importer types a value of unknown rank (an Unsqueeze whose axes are computed) as a scalar: the conversion then fails with an unresolved materialization
# iree 3.13.0, Python 3.11.2, numpy 2.4.6; configuration opt=O0
# Upstream: none found (related: llvm/torch-mlir#3593, iree-org/iree#18153, both closed)
#
# The ONNX specification, Shape-15 (https://onnx.ai/onnx/operators/onnx__Shape.html#shape-15):
#   | Takes a tensor as input and outputs an 1D int64 tensor containing the shape of the input tensor.
#   | Optional attributes start and end can be used to compute a slice of the input tensor's shape.
#   | If start axis is omitted, the slice starts from axis 0.
#   | The end axis, if specified, is exclusive (and the returned value will not include the size of that axis).
#   | If the end axis is omitted, the axes upto the last one will be included.
#   | Negative axes indicate counting back from the last axis.
#   | Note that axes will be clamped to the range [0, r-1], where r is the
#   | rank of the input tensor if they are out-of-range (after adding r in the case of
#   | negative axis). Thus, specifying any end value > r is equivalent to specifying an end
#   | value of r, and specifying any start value < -r is equivalent to specifying a start
#   | value of 0.
#
# What goes wrong: (as recorded at opt=O3+opt-in) iree (opt=O3+opt-in) failed: iree (opt=O3+opt-in): RuntimeError: IREE failed to compile the model: source.mlir:7:10: error: failed to legalize unresolved materialization from ('!torch.vtensor<[2,2,2],si64>') to ('!torch.vtensor<[],si64>') that remained live after conversion (no type converter specified)
# Configurations: fails at opt=O0 (error), opt=O1 (error), opt=O2 (error), opt=O3 (error), opt=O3+opt-in (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_148 (opset 17, 3 nodes)
#     input  v1: int64[2, 2, 2]
#     init   w95: int64[2] {0, -3}
#     init   w96: int64[2] {4, 4}
#     s2 = Add(w95, w96)
#     v3 = Unsqueeze(v1, s2)
#     v33 = Shape(v3)
#     output v33: int64[5]
#
# Needs: pip install iree-base-compiler[onnx]==3.13.0 iree-base-runtime==3.13.0 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/iree/corpus/8cf37b8f98007cf0/ --backend iree
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
    "v1": np.array([0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int64).reshape([2, 2, 2]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v33", np.array([2, 1, 2, 2, 1], dtype=np.int64).reshape([5])),
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
