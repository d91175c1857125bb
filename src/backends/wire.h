// The bytes nncheck's processes exchange, written and read in this one place: frames (a u64
// length, then the body), read by a deadline while the process that sends them is watched (its
// memory, and its end), and tensors as raw bytes that go straight from a tensor to the descriptor
// and from it into a tensor. The isolated engine's reports (isolation.cpp) and the worker protocol
// (worker_protocol.h, docs/worker-protocol.md) are both made of these.
//
//   wire::Message m;
//   m.own(header);                                  // small parts it keeps
//   wire::putTensor(m, "y", y);                     // y's bytes are sent from y itself
//   m.send(fd);
//   ...
//   wire::Length l = wire::readLength(fd, deadline, maxBytes, &watch);
//   wire::Reader in(fd, l.value, deadline, &watch, "worker 'python3 e.py'");
//   std::string name;
//   Tensor t = wire::takeTensor(in, name);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "nncheck/tensor.h"

namespace nncheck::wire {

using Clock = std::chrono::steady_clock;

// Writes all of `bytes` to a socket or a pipe; false when the other side is gone (never
// SIGPIPE on a socket; a pipe's writer ignores SIGPIPE).
bool writeAll(int fd, std::string_view bytes);

void putU32(std::string& out, uint32_t v);
void putI32(std::string& out, int32_t v);
void putU64(std::string& out, uint64_t v);
void putI64(std::string& out, int64_t v);
// A u64 length, then the bytes: a string, a model, an attachment.
void putBytes(std::string& out, std::string_view bytes);

// A frame sent in pieces, never joined: small parts it owns, and views of large buffers (tensors'
// bytes) that outlive it, so that a 512 MiB output is never copied to be sent.
class Message {
 public:
  void own(std::string s);
  void view(const void* data, size_t n);
  uint64_t size() const;
  // The length, then the parts; false when the other side is gone.
  bool send(int fd) const;

 private:
  std::deque<std::string> owned_;  // (a deque: appending moves none, so views stay valid)
  std::vector<std::string_view> parts_;
};

// One frame of `body`, sent from where it is.
bool sendFrame(int fd, std::string_view body);

// Bytes `pid` and its descendants hold of their own: private dirty pages, what they wrote, not
// the libraries they map nor the pages a fork shares with its parent until written.
int64_t memoryHeldBy(pid_t pid);
// Bytes `pid` and its descendants have resident, at least what they hold (memoryHeldBy), read
// in constant time per process.
int64_t residentIn(pid_t pid);

// A process watched while a reader waits on what it sends: the memory it and its descendants
// hold, against `limit` (0: not watched), and its end: a child of this process that has exited
// ends the read as Gone, even while a process it started still holds the descriptor open.
struct ProcessWatch {
  pid_t pid;
  int64_t limit = 0;
};

// How a read ended: all came; the other side closed or died; the deadline passed; the watched
// processes held more than their limit; a frame claimed more than the reader takes.
enum class Ending { Whole, Gone, Late, OverMemory, TooLarge };

// Reads exactly n bytes into `to` by the deadline (Clock::time_point::max(): none); while a wait
// is long, looks at the watched process every 100 ms, and at the limits in force on this thread
// (core/deadline.h: a time box, an interrupt), whose DeadlineExceeded it lets through. `held`:
// what the watched processes held, when that ended it.
Ending readExactly(int fd, char* to, size_t n, Clock::time_point deadline,
                   const ProcessWatch* watch, int64_t& held);

// A frame's length, by the deadline; `ending` says when none came whole, or it claims more than
// `maxBytes` (then `bytes` is the claim; OverMemory: what the processes held).
struct Length {
  Ending ending = Ending::Whole;
  uint64_t value = 0;
  int64_t bytes = 0;
};
Length readLength(int fd, Clock::time_point deadline, uint64_t maxBytes,
                  const ProcessWatch* watch = nullptr);

// One frame whole, for small messages and for forwarding.
struct Frame {
  Ending ending = Ending::Whole;
  std::string body;
  int64_t bytes = 0;  // as Length's
};
Frame readFrame(int fd, Clock::time_point deadline, uint64_t maxBytes,
                const ProcessWatch* watch = nullptr);

// A descriptor that ended (died, late, past the memory limit) before the frame it was reading
// did: thrown by Reader; its reader decides what that means.
struct CutShort {
  Ending ending;
};

// The fields of a frame's body, read with bounds checks: from its bytes in memory, or from a
// descriptor as it is decoded, so that a tensor's bytes go straight into the tensor and are never
// held twice. `who` names the sender in errors ("isolated run", "worker 'node worker.js'").
class Reader {
 public:
  Reader(std::string_view body, std::string who);
  Reader(int fd, uint64_t length, Clock::time_point deadline, const ProcessWatch* watch,
         std::string who);

  // The next n bytes, valid until the next read; throws nncheck::Error naming `who` when the
  // body holds fewer.
  std::string_view take(size_t n);
  // The next n bytes, into `to`.
  void into(char* to, size_t n);
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof(T)).data(), sizeof(T));
    return v;
  }
  // A u64 length, then that many bytes (putBytes's).
  std::string_view bytes();
  uint64_t left() const { return left_; }
  const std::string& who() const { return who_; }

 private:
  void claim(uint64_t n);
  void fill(char* to, size_t n);
  std::string_view body_;
  int fd_ = -1;
  uint64_t left_;
  Clock::time_point deadline_{};
  const ProcessWatch* watch_ = nullptr;
  std::string who_;
  std::string scratch_;
};

// A tensor: its name, i32 ONNX dtype, u32 rank, i64 dims, then a u64 byte count and the raw
// little-endian bytes, sent from the tensor itself (a string tensor: each element as bytes).
void putTensor(Message& m, const std::string& name, const Tensor& t);
// The next tensor; throws nncheck::Error naming `who` and the tensor when it is malformed,
// before anything is allocated for a claim the body cannot hold.
Tensor takeTensor(Reader& r, std::string& name);

}  // namespace nncheck::wire
