"""TVM 0.27 (Relax): LRN with an even `size` grows the channel axis by one.

ONNX's LRN sums the squares over channels max(0, c - floor((size-1)/2)) .. min(C-1, c +
ceil((size-1)/2)): the output has the input's shape. TVM's ONNX frontend (apache/tvm#18668)
average-pools the squares with a window of `size` and padding size//2 on both sides, which for an
even size gives C + 1 channels. Here: input [1, 1, 1], size 4 -> TVM gives [1, 2, 1].
"""
import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1])
graph = helper.make_graph([helper.make_node("LRN", ["x"], ["y"], size=4)], "lrn", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
vm = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
out = vm["main"](tvm.runtime.tensor(np.zeros([1, 1, 1], np.float32))).numpy()
print("TVM", tvm.__version__, "output shape", list(out.shape), "(ONNX: [1, 1, 1])")
assert list(out.shape) == [1, 1, 1], "bug reproduced: LRN with an even size changes the shape"
