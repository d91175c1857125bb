"""TVM 0.27 (Relax): LayerNormalization's optional Mean output has the wrong shape.

ONNX's LayerNormalization-17 has optional outputs Mean and InvStdDev of shape [d0, ..., d(axis-1),
1, ..., 1]: the input's rank, the normalized axes kept as 1. TVM returns them as scalars. Here X
is [1] (axis -1), so Mean must be [1]; TVM gives []. ONNX's node tests
test_layer_normalization_* fail the same way.
"""
import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
mean = helper.make_tensor_value_info("mean", TensorProto.FLOAT, [2, 1])
scale = numpy_helper.from_array(np.ones([3], np.float32), "scale")
node = helper.make_node("LayerNormalization", ["x", "scale"], ["y", "mean"])
graph = helper.make_graph([node], "layernorm", [x], [mean], [scale])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
vm = relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())
out = vm["main"](tvm.runtime.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))).numpy()
print("TVM", tvm.__version__, "Mean shape", list(out.shape), "(ONNX: [2, 1])")
assert list(out.shape) == [2, 1], "bug reproduced: LayerNormalization's Mean has the wrong shape"
