"""TVM 0.27 (Relax): Pad whose constant_value is a graph input fails to import.

ONNX's Pad-13 takes `constant_value` as an optional input, any scalar tensor of T, not only a
constant. TVM's ONNX frontend reads it as a constant (`constant_value.value`) and fails with
AttributeError: 'Var' object has no attribute 'value'.
"""
import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1])
value = helper.make_tensor_value_info("value", TensorProto.FLOAT, [])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3])
pads = numpy_helper.from_array(np.array([0, 0, 1, 0, 0, 1], np.int64), "pads")
graph = helper.make_graph([helper.make_node("Pad", ["x", "pads", "value"], ["y"])], "pad", [x, value], [y], [pads])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
try:
    mod = from_onnx(model)
except AttributeError as e:
    raise SystemExit(f"bug reproduced: TVM {tvm.__version__} cannot import Pad with a constant_value input: {e}")
vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
out = vm["main"](tvm.runtime.tensor(np.ones([1, 1, 1], np.float32)), tvm.runtime.tensor(np.float32(7))).numpy()
print(out)  # ONNX: [[[7, 1, 7]]]
