// Import and export between the graph IR and ONNX's files (ModelProto, TensorProto bytes). The
// protobuf types themselves stay inside nncheck: this header needs no ONNX headers.
//
//   nncheck::Model m = nncheck::loadModel("model.onnx");
//   nncheck::saveModel(m, "copy.onnx");               // atomic: temp file, then rename
//   nncheck::Tensor x = nncheck::loadTensor("test_data_set_0/input_0.pb");
//
// Export is deterministic: the same IR always gives the same bytes. Tensors are written as
// raw_data, so a model whose tensors used typed fields re-imports to the same IR, not the
// same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "nncheck/graph.h"

namespace nncheck {

// Parse bytes; `origin` names the source in errors (a file path, "memory"). A model that refers
// to a file anywhere (external data of a tensor: dense or sparse initializers, attribute tensors,
// nested graphs, functions) is refused with an error naming the tensor.
Model parseModel(const std::string& bytes, std::string_view origin);
// Throws nncheck::Error naming the first tensor of `model` that keeps its data in a file (what
// the IR holds as protobuf bytes may: sparse initializers, opaque attributes, functions). Every
// model handed to an engine is checked so (nncheck::Isolated::run): none refers to a file.
void refuseFileReferences(const Model& model, std::string_view origin);
std::string serializeModel(const Model& model);
Tensor parseTensor(const std::string& bytes, std::string_view origin, std::string* name = nullptr);
std::string serializeTensor(const Tensor& tensor, const std::string& name);

// Whether a read follows a symbolic link at the path's last component. The files inside a case
// folder are read with Refuse: a corpus from elsewhere (a CI artifact, a shared volume) must not
// make nncheck copy or print what a link in it points to (notes.txt -> /etc/shadow).
enum class Links { Follow, Refuse };

// File forms. Loads throw nncheck::Error naming the path; saves are atomic.
Model loadModel(const std::filesystem::path& path);
void saveModel(const Model& model, const std::filesystem::path& path);
Tensor loadTensor(const std::filesystem::path& path, std::string* name = nullptr,
                  Links links = Links::Follow);
void saveTensor(const Tensor& tensor, const std::string& name, const std::filesystem::path& path);

}  // namespace nncheck
