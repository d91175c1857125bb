// The graph IR to and from ONNX's protobuf messages, for nncheck's own layers that call ONNX's
// checker, shape inference or schemas. Not public: users see bytes and files (nncheck/onnx_io.h).
//
//   onnx::ModelProto proto = nncheck::modelToProto(model);
//   onnx::checker::check_model(proto);
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <string_view>

#include "nncheck/graph.h"

namespace nncheck {

Model modelFromProto(const onnx::ModelProto& proto);
onnx::ModelProto modelToProto(const Model& model);

Tensor tensorFromProto(const onnx::TensorProto& proto, std::string_view origin = "tensor");

// Calls f(tensor, path) for every TensorProto at or below `m`, in any field (initializers, sparse
// initializers, attribute tensors, nested graphs, functions, training information: protobuf's
// reflection walks every message field there is), `path` naming the fields that lead to it from
// `origin` ("model.graph.sparse_initializer[0].values"); stops, returning true, when f does.
bool forEachTensorIn(const google::protobuf::Message& m, const std::string& origin,
                     const std::function<bool(const onnx::TensorProto&, const std::string&)>& f);
onnx::TensorProto tensorToProto(const Tensor& tensor, const std::string& name);

}  // namespace nncheck
