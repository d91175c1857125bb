// libFuzzer: no model that refers to a file is taken. The input is parsed as a model, then a
// tensor of it (its initializers, attributes, nested graphs, functions: whichever the input's
// size picks), or a sparse initializer added to it, is made to keep its data in a file named by
// the input's last bytes. Whatever the model, the loader must refuse it, naming the tensor: one
// it takes would be handed to an engine, which reads the file relative to where it runs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/onnx_proto.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto p;
  if (!p.ParseFromArray(data, static_cast<int>(size)) || !p.has_graph()) return 0;
  const std::string location(reinterpret_cast<const char*>(data) + size - std::min<size_t>(size, 8),
                             std::min<size_t>(size, 8));
  std::vector<onnx::TensorProto*> tensors;
  nncheck::forEachTensorIn(p, "model", [&](const onnx::TensorProto& t, const std::string&) {
    tensors.push_back(const_cast<onnx::TensorProto*>(&t));  // (the harness owns the model)
    return false;
  });
  onnx::TensorProto* planted = nullptr;
  if (!tensors.empty() && size % 3 != 0) {
    planted = tensors[size % tensors.size()];
  } else {
    onnx::SparseTensorProto* s = p.mutable_graph()->add_sparse_initializer();
    planted = size % 2 ? s->mutable_values() : s->mutable_indices();
  }
  // Either way ONNX's loaders read it: the EXTERNAL location, or external_data entries alone.
  if (size % 5 != 0) planted->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = planted->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  try {
    nncheck::parseModel(p.SerializeAsString(), "fuzz");
  } catch (const nncheck::Error&) {
    return 0;  // refused: for the file, or for something else first
  }
  __builtin_trap();  // a model that refers to a file was taken
}
