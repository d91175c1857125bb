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

// Parse bytes; `origin` names the source in errors (a file path, "memory").
Model parseModel(const std::string& bytes, std::string_view origin);
std::string serializeModel(const Model& model);
Tensor parseTensor(const std::string& bytes, std::string_view origin, std::string* name = nullptr);
std::string serializeTensor(const Tensor& tensor, const std::string& name);

// File forms. Loads throw nncheck::Error naming the path; saves are atomic.
Model loadModel(const std::filesystem::path& path);
void saveModel(const Model& model, const std::filesystem::path& path);
Tensor loadTensor(const std::filesystem::path& path, std::string* name = nullptr);
void saveTensor(const Tensor& tensor, const std::string& name, const std::filesystem::path& path);

// The largest file nncheck reads (2 GiB, protobuf's own limit for one message).
inline constexpr int64_t kMaxFileBytes = int64_t{2} << 30;

// Reads a whole regular file of at most kMaxFileBytes; throws nncheck::Error naming the path and
// what is wrong (missing, a folder, a FIFO or device, too large, unreadable).
std::string readFile(const std::filesystem::path& path);
// Writes `path` atomically and durably: a temporary file beside it, synced to disk, renamed over
// it, and the folder synced.
void writeFileAtomic(const std::filesystem::path& path, const std::string& bytes);
// Syncs a file or folder to disk (fsync); throws nncheck::Error naming it.
void syncPath(const std::filesystem::path& path);

}  // namespace nncheck
