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

// The largest file nncheck reads (2 GiB, protobuf's own limit for one message).
inline constexpr int64_t kMaxFileBytes = int64_t{2} << 30;

// Reads a whole regular file of at most `maxBytes`; throws nncheck::Error naming the path and
// what is wrong (missing, a folder, a FIFO or device, a link when links are refused, too large,
// unreadable).
std::string readFile(const std::filesystem::path& path, Links links = Links::Follow,
                     int64_t maxBytes = kMaxFileBytes);
// Writes `path` atomically and durably: a temporary file beside it (made anew, never through a
// link left at its name), synced to disk, renamed over it, and the folder synced. A file
// replaced keeps its permissions.
void writeFileAtomic(const std::filesystem::path& path, const std::string& bytes);
// Syncs a file or folder to disk (fsync); throws nncheck::Error naming it.
void syncPath(const std::filesystem::path& path);

// A bulk write (nncheck gen --out: thousands of small files), made durable once instead of per
// file. While one is open on a thread, writeFileAtomic and syncPath there still write each file
// whole (a temporary renamed into place, so no reader sees half a file) but do not sync;
// commit() syncs the file system holding `root` once. Until then, a power loss may lose or
// empty what was written.
//
//   BulkWrite bulk("out");
//   for (...) saveBackendTestCase("out/seed_" + ..., ...);
//   bulk.commit();   // throws nncheck::Error naming "out"
class BulkWrite {
 public:
  explicit BulkWrite(std::filesystem::path root);
  ~BulkWrite();
  BulkWrite(const BulkWrite&) = delete;
  BulkWrite& operator=(const BulkWrite&) = delete;
  void commit();

 private:
  std::filesystem::path root_;
  BulkWrite* outer_;
};

// Writes a file a person named (-o, --report). A new or regular file is written as
// writeFileAtomic does; through a symbolic link, the file it points to is (the link stays a
// link); a device, FIFO or socket (/dev/null, /dev/stdout) is written to directly, since a
// rename would replace it with a regular file. Throws nncheck::Error naming the path.
void writeOutputFile(const std::filesystem::path& path, const std::string& bytes);
// Throws nncheck::Error unless writeOutputFile(path) can work: `path` is no folder, and the
// folder it goes in exists and is writable. For commands that write at the end of long work.
void checkOutputFile(const std::filesystem::path& path);

}  // namespace nncheck
