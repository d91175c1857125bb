// The graph IR to and from ONNX's protobuf messages, for nncheck's own layers that call ONNX's
// checker, shape inference or schemas. Not public: users see bytes and files (nncheck/onnx_io.h).
//
//   onnx::ModelProto proto = nncheck::modelToProto(model);
//   onnx::checker::check_model(proto);
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

#include "nncheck/graph.h"

namespace nncheck {

Model modelFromProto(const onnx::ModelProto& proto);
onnx::ModelProto modelToProto(const Model& model);

Tensor tensorFromProto(const onnx::TensorProto& proto, std::string_view origin = "tensor");
onnx::TensorProto tensorToProto(const Tensor& tensor, const std::string& name);

}  // namespace nncheck
