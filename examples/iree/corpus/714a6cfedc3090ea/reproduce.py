#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# iree 3.13.0: Unsqueeze fails on a valid model — A Conv with stride 2 whose output length is 1 fails to compile: FoldUnitExtentDims drops the unit output loop but leaves the input longer than the kernel
# iree 3.13.0, Python 3.11.2, numpy 2.4.6; configuration opt=O0
# Upstream: none found
#
# The ONNX specification, Unsqueeze-13 (https://onnx.ai/onnx/operators/onnx__Unsqueeze.html#unsqueeze-13):
#   | Insert single-dimensional entries to the shape of an input tensor (`data`).
#   | Takes one required input `axes` - which contains a list of dimension indices and this operator will insert a dimension of value `1` into the corresponding index of the output tensor (`expanded`).
#
# What goes wrong: (as recorded at opt=O2) iree (opt=O2) failed: iree (opt=O2): RuntimeError: IREE failed to compile the model: source.mlir:6:10: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #2 to be 4, but found 3
# Configurations: fails at opt=O0 (error), opt=O1 (error), opt=O2 (error), opt=O3 (error), opt=O3+opt-in (error); passes at none: fails at every configuration: the fault is in what they share
#
# The model (model.onnx, beside this script):
#   graph nncheck_305 (opset 17, 2 nodes)
#     input  x7: float32[6, 7, 3, 1]
#     input  v15: float32[5, 6, 1]
#     input  v5: float32[5, 7, 1, 1]
#     init   w8: float32[6] {-0.84282, 0.195512, 0.473883, -0.353009, 0.108913, -0.0199788}
#     init   w16: int64[1] {1}
#     v9 = Conv(v5, x7, w8) {pads=[1, 0, 2, 0], strides=[2, 3]}
#     v17 = Unsqueeze(v15, w16)
#     output v17: float32[5, 1, 6, 1]
#     output v9: float32[5, 6, 1, 1]
#
# Needs: pip install iree-base-compiler[onnx]==3.13.0 iree-base-runtime==3.13.0 numpy
# Run: python3 reproduce.py   (exits 1 while the bug is there, 0 once it is fixed)
# Written by: nncheck repro examples/iree/corpus/714a6cfedc3090ea --backend iree
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
    "x7": np.array([0.833481431, 0.447207808, -0.424492151, -0.56448555, -0.749897182, -0.0907305181, -0.581853211, 0.837743402, -0.430332899, 0.664190829, 0.445112258, -0.831795454,
        -0.113060184, 0.175382569, 0.864966631, -0.284022659, -0.765668452, -0.125556052, 0.993902624, -0.581638694, -0.0545558967, 0.878022969, 0.0348031409, 0.971040428,
        0.485178918, 0.9761554, -0.358126134, 0.411501795, -0.908885479, 0.905579984, 0.311830699, -0.467729002, 0.5290398, -0.701875031, -0.870070338, -0.303896248,
        -0.785806715, -0.992554784, 0.696917713, -0.261678517, 0.264451206, 0.151823238, -0.677499235, 0.423682302, -0.564519465, -0.411197871, 0.269198358, -0.954484999,
        -0.473309457, -0.578353882, -0.947055042, 0.594327092, -0.0570863709, -0.207202718, 0.112874016, -0.0220561977, -0.894200027, 0.732304871, -0.543218315, -0.117700681,
        -0.367284089, -0.278727204, 0.214901, 0.034037061, -0.193272635, 0.0817559361, 0.237633407, -0.871721983, 0.17713441, 0.861105382, 0.542800903, 0.405851036,
        0.0664684549, -0.942019463, -0.481718034, -0.410144418, -0.0946081504, 0.808469057, -0.457241267, 0.344877005, 0.428363532, 0.422111899, 0.396801889, 0.0845200568,
        -0.87926805, 0.700212777, 0.523858845, 0.0373289771, 0.0701785758, 0.140849695, -0.656792581, 0.299131751, 0.82330215, 0.972953975, 0.937064767, -0.353242904,
        0.782418489, -0.317163467, -0.327960044, 0.771229148, 0.951227546, -0.106506668, -0.841123462, -0.677338183, 0.387984395, 0.225071445, 0.992587984, -0.272540003,
        -0.875413775, 0.0104787396, 0.649547279, -0.992673397, 0.453060001, 0.142161056, -0.312096477, -0.318794489, -0.176367939, -0.81547153, -0.655499637, -0.905264258,
        0.896618068, 0.866246879, 0.0394502766, 0.541147172, 0.368826926, 0.256269902], dtype=np.float32).reshape([6, 7, 3, 1]),
    "v15": np.array([1, 1, 0.81744504, 0.970169246, 1, 0.635119259, 1, 1, 0.81744504, 0.970169246, 1, 0.635119259,
        1, 1, 0.81744504, 0.970169246, 1, 0.635119259, 1, 1, 0.81744504, 0.970169246, 1, 0.635119259,
        1, 1, 0.81744504, 0.970169246, 1, 0.635119259], dtype=np.float32).reshape([5, 6, 1]),
    "v5": np.array([-0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438,
        -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438,
        -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438, -0.822812438], dtype=np.float32).reshape([5, 7, 1, 1]),
}
# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.
EXPECTED = [
    ("v17", np.array([1, 1, 0.81744504, 0.970169246, 1, 0.635119259, 1, 1, 0.81744504, 0.970169246, 1, 0.635119259,
        1, 1, 0.81744504, 0.970169246, 1, 0.635119259, 1, 1, 0.81744504, 0.970169246, 1, 0.635119259,
        1, 1, 0.81744504, 0.970169246, 1, 0.635119259], dtype=np.float32).reshape([5, 1, 6, 1])),
    ("v9", np.array([-0.685039043, 1.81137586, 1.12107491, 0.319345742, -1.50652564, -1.43267083, -0.685039043, 1.81137586, 1.12107491, 0.319345742, -1.50652564, -1.43267083,
        -0.685039043, 1.81137586, 1.12107491, 0.319345742, -1.50652564, -1.43267083, -0.685039043, 1.81137586, 1.12107491, 0.319345742, -1.50652564, -1.43267083,
        -0.685039043, 1.81137586, 1.12107491, 0.319345742, -1.50652564, -1.43267083], dtype=np.float32).reshape([5, 6, 1, 1])),
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
