// Files as nncheck reads and writes them: a regular file of bounded size read whole (never through
// a link where links are refused), writes that are atomic and durable, bulk writes synced once,
// and files a person named (-o, --report). Inside nncheck; users load and save models and tensors
// with nncheck/onnx_io.h.
//
//   std::string bytes = nncheck::readFile(dir / "model.onnx", nncheck::Links::Refuse);
//   nncheck::writeFileAtomic(dir / "nncheck.json", text);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "nncheck/onnx_io.h"

namespace nncheck {

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

// A regular file of at most `maxBytes`, opened for reading: what readFile and loadTensor read.
// Opened first and judged by what was opened (no check-then-open race); O_NONBLOCK so that a
// FIFO is judged, not waited on.
class CheckedFile {
 public:
  CheckedFile(const std::filesystem::path& path, Links links, int64_t maxBytes);
  ~CheckedFile();
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;
  int fd() const { return fd_; }
  int64_t size() const { return size_; }

 private:
  [[noreturn]] void fail(const std::string& why);
  int fd_ = -1;
  int64_t size_ = 0;
};

}  // namespace nncheck
