#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# iree 3.13.0: Pad fails on a valid model after pad-handling — With pad-handling on, a Pad of bool fails: the i1-to-i8 widening leaves the pad region yielding i1
# iree 3.13.0, Python 3.11.2, numpy 2.4.6; configuration opt=O3+opt-in
# Upstream: none found (the same for tensor.pack: iree-org/iree#15692, closed)
#
# The ONNX specification, Pad-13 (https://onnx.ai/onnx/operators/onnx__Pad.html#pad-13):
#   | Given a tensor containing the data to be padded (`data`), a tensor containing the number of start and end pad values for axis (`pads`), (optionally) a `mode`, and (optionally) `constant_value`,
#   | a padded tensor (`output`) is generated.
#
# What goes wrong: iree (opt=O3+opt-in) failed: iree (opt=O3+opt-in): RuntimeError: IREE failed to compile the model: source.mlir:6:10: error: 'tensor.pad' op expected yield type to match shape element type
# Configurations: fails at opt=O3+opt-in (error); passes at opt=O0, opt=O1, opt=O2, opt=O3: passes at opt=O0: a bug of the optimizing configurations
# Culprit: fails with only pad-handling enabled; passes with it disabled; workaround: the configuration opt=O3+opt-in,disable=pad-handling
#
# The model (model.onnx, beside this script):
#   graph nncheck_267 (opset 17, 1 nodes)
#     input  x0: bool[1, 1]
#     init   s1: int64[4] {1, 2, 2, 1}
#     init   x2: bool[] {1}
#     v3 = Pad(x0, s1, x2)
#     output v3: bool[4, 4]
#
# Needs: pip install iree-base-compiler[onnx]==3.13.0 iree-base-runtime==3.13.0 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/iree/corpus/aa57a56217260593/ --backend iree
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
    vmfb = iree.compiler.compile_file(mlir, extra_args=['--iree-hal-target-device=local', '--iree-hal-local-target-device-backends=llvm-cpu', '--iree-llvmcpu-target-cpu=host', '--iree-opt-level=O3', '--iree-opt-const-eval=true', '--iree-opt-const-expr-hoisting=true', '--iree-dispatch-creation-fuse-multi-use=true', '--iree-opt-outer-dim-concat=true', '--iree-opt-strip-assertions=true', '--iree-opt-generalize-matmul=true', '--iree-dispatch-creation-enable-aggressive-fusion=true', '--iree-llvmcpu-reassociate-fp-reductions=true', '--iree-opt-aggressively-propagate-transposes=true', '--iree-opt-data-tiling=true', '--iree-dispatch-creation-enable-split-reduction=true', '--iree-flow-enable-pad-handling=true', '--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops=true', '--iree-dispatch-creation-enable-aggressive-reshape-movement=true', '--iree-global-opt-use-im2col-for-convs=true', '--iree-global-opt-propagate-transposes-through-conv=true', '--iree-global-opt-enable-sink-transpose-through-pad=true', '--iree-llvmcpu-loop-vectorization=true', '--iree-llvmcpu-slp-vectorization=true', '--iree-llvmcpu-loop-unrolling=true'])
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
    "x0": np.array([False], dtype=np.bool_).reshape([1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v3", np.array([True, True, True, True, True, True, False, True, True, True, True, True,
        True, True, True, True], dtype=np.bool_).reshape([4, 4])),
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
