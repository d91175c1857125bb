"""TVM 0.27 (Relax): EyeLike with a `dtype` attribute other than its input's fails to import.

ONNX's EyeLike-9 makes an identity-like tensor of its input's shape, of the type its `dtype`
attribute names (else its input's). TVM's ONNX frontend refuses a `dtype` that differs from the
input's: "ValueError: dtype mismatch between input (float32) and attribute (6)". ONNX's own node
test test_eyelike_with_dtype fails the same way.
"""
import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
y = helper.make_tensor_value_info("y", TensorProto.INT32, [2, 2])
graph = helper.make_graph([helper.make_node("EyeLike", ["x"], ["y"], dtype=TensorProto.INT32)], "eyelike", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
try:
    mod = from_onnx(model)
except ValueError as e:
    raise SystemExit(f"bug reproduced: TVM {tvm.__version__} cannot import EyeLike with dtype: {e}")
vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
print(vm["main"](tvm.runtime.tensor(np.zeros([2, 2], np.float32))).numpy())  # ONNX: int32 [[1, 0], [0, 1]]
