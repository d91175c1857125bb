"""TVM 0.27 (Relax): Dropout's mask output is float, not bool.

ONNX's Dropout-13 has an optional second output `mask` of type T2 = tensor(bool); in inference
mode it is all true. TVM legalizes nn.dropout to its input and an all-ones mask of the input's
dtype (apache/tvm#19841), so the ONNX model's bool output comes back as float32.
"""
import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
mask = helper.make_tensor_value_info("mask", TensorProto.BOOL, [1])
graph = helper.make_graph([helper.make_node("Dropout", ["x"], ["y", "mask"])], "dropout", [x], [mask])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
vm = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
out = vm["main"](tvm.runtime.tensor(np.ones([1], np.float32))).numpy()
print("TVM", tvm.__version__, "mask", out.dtype, out, "(ONNX: bool [True])")
assert out.dtype == np.bool_, "bug reproduced: Dropout's mask is not bool"
