"""Reproduces a TVM finding with TVM, onnx and numpy alone (no nncheck): imports a saved case's
model.onnx with TVM's ONNX frontend, runs the pipeline's passes, compiles for llvm, runs the
inputs of test_data_set_0 on Relax's VM, and compares with the expected outputs (ONNX's
reference, as saved). Prints what TVM did and exits 1 when it differs or fails.

    ~/.cache/nncheck/python/tvm/bin/python examples/tvm/reproduce.py CASE_DIR [zero|full|default]
"""

import pathlib
import sys
import traceback

import numpy as np
import onnx
import tvm
from onnx import numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

case = pathlib.Path(sys.argv[1])
pipeline = sys.argv[2] if len(sys.argv) > 2 else "zero"
model = onnx.load(str(case / "model.onnx"))
data = case / "test_data_set_0"
graph_inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]


def tensors(prefix):
    files = sorted(data.glob(prefix + "_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in files]


inputs, expected = tensors("input"), tensors("output")
passes = {
    "default": [],
    "zero": [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
             relax.transform.FoldConstant(), relax.transform.FuseOps(), relax.transform.FuseTIR()],
}
passes["full"] = [relax.transform.CanonicalizeBindings(), relax.transform.EliminateCommonSubexpr(),
                  relax.transform.DeadCodeElimination(), relax.backend.DispatchSampling(),
                  relax.backend.DispatchSortScan()] + passes["zero"]
try:
    mod = from_onnx(model, opset=model.opset_import[0].version)
    mod = relax.transform.DecomposeOpsForInference()(mod)
    with tvm.target.Target("llvm"):
        mod = tvm.transform.Sequential(passes[pipeline])(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    result = vm["main"](*[tvm.runtime.tensor(a) for a in inputs])
except Exception:
    traceback.print_exc()
    print(f"TVM {tvm.__version__} fails on this model (pipeline {pipeline})")
    sys.exit(1)
got = [result] if isinstance(result, tvm.runtime.Tensor) else list(result)
got = [g.numpy() if isinstance(g, tvm.runtime.Tensor) else np.array(list(g), np.int64) for g in got]
bad = False
for out, g, want in zip(model.graph.output, got, expected):
    same = g.dtype == want.dtype and g.shape == want.shape and np.allclose(g, want, rtol=1e-3, atol=1e-5)
    bad |= not same
    print(f"{out.name}: {'as expected' if same else 'DIFFERS'}: got {g.dtype}{list(g.shape)} "
          f"{g.ravel()[:8]}, expected {want.dtype}{list(want.shape)} {want.ravel()[:8]}")
sys.exit(1 if bad else 0)
