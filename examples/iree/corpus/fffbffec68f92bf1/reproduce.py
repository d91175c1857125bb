#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# iree 3.13.0: MaxPool fails on a valid model (with ceil_mode, kernel_shape) — MaxPool with ceil_mode=1 fails to compile after FoldUnitExtentDims makes an invalid linalg.generic of the padded input
# iree 3.13.0, Python 3.11.2, numpy 2.4.6; configuration opt=O0
# Upstream: none found (iree-org/iree#24579, open, is a different ceil_mode failure)
#
# The ONNX specification, MaxPool-12 (https://onnx.ai/onnx/operators/onnx__MaxPool.html#maxpool-12):
#   | MaxPool consumes an input tensor X and applies max pooling across
#   |  the tensor according to kernel sizes, stride sizes, and pad lengths.
#   |  max pooling consisting of computing the max on all values of a
#   |  subset of the input tensor according to the kernel size and downsampling the
#   |  data into the output tensor Y for further processing. The output spatial shape will be following:
#   |  ```
#   |  output_spatial_shape[i] = floor((input_spatial_shape[i] + pad_shape[i] - ((kernel_spatial_shape[i] - 1) * dilations[i] + 1)) / strides_spatial_shape[i] + 1)
#   |  ```
#   |  or
#   |  ```
#   |  output_spatial_shape[i] = ceil((input_spatial_shape[i] + pad_shape[i] - ((kernel_spatial_shape[i] - 1) * dilations[i] + 1)) / strides_spatial_shape[i] + 1)
#   |  ```
#   |  if ceil_mode is enabled
#   ceil_mode=1: Whether to use ceil or floor (default) to compute the output shape.
#   kernel_shape=[1, 1]: The size of the kernel along each axis.
#
# What goes wrong: iree (opt=O0) failed: iree (opt=O0): RuntimeError: IREE failed to compile the model: source.mlir:4:10: error: 'linalg.generic' op inferred input/output operand #2 has shape's dimension #0 to be 3, but found 2
# Configurations: fails at opt=O0 (error), opt=O1 (error), opt=O2 (error), opt=O3 (error), opt=O3+opt-in (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_225 (opset 17, 1 nodes)
#     input  v1: float32[1, 1, 2, 1]
#     v2 = MaxPool(v1) {ceil_mode=1, kernel_shape=[1, 1]}
#     output v2: float32[1, 1, 2, 1]
#
# Needs: pip install iree-base-compiler[onnx]==3.13.0 iree-base-runtime==3.13.0 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/iree/corpus/fffbffec68f92bf1/ --backend iree
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
    "v1": np.array([0, 0], dtype=np.float32).reshape([1, 1, 2, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v2", np.array([0, 0], dtype=np.float32).reshape([1, 1, 2, 1])),
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
