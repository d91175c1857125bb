// A Node.js program run as a child of the engine's process, serving requests over its stdin and
// stdout, each message a u32 little-endian length and its bytes. What it writes to stderr (ORT's
// log) goes to an unlinked temporary file, read back after each reply; so does what it writes
// to /proc/self/fd/3 (ORT's optimized model), read with takeFile3(). Nothing stays on disk.
//
//   NodeWorker w("/usr/bin/node", "worker.js", {{"NNCHECK_ORT_NODE_MODULES", dir}});
//   std::string log;
//   std::string reply = w.call(request, log);
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nncheck::ort {

class NodeWorker {
 public:
  NodeWorker(std::string node, std::string script,
             std::vector<std::pair<std::string, std::string>> environment);
  ~NodeWorker();
  NodeWorker(const NodeWorker&) = delete;
  NodeWorker& operator=(const NodeWorker&) = delete;

  // A reply being read: its bytes come from the worker's stdout as they are asked for, so an
  // output's bytes go straight into its tensor, never held twice. What is left unread when it
  // goes is read and dropped, so the next reply starts where it should.
  class Reply {
   public:
    Reply(NodeWorker& worker, uint32_t length) : worker_(worker), left_(length) {}
    Reply(const Reply&) = delete;
    Reply& operator=(const Reply&) = delete;
    ~Reply();
    // The next n bytes into `to`; throws nncheck::Error when the reply holds fewer.
    void read(void* to, size_t n);
    size_t left() const { return left_; }

   private:
    NodeWorker& worker_;
    size_t left_;
  };

  // Sends one request and returns its reply, once its length has come; `log` gets what the
  // worker wrote to stderr meanwhile. Starts the worker on first use. Throws nncheck::Error naming
  // the program when it cannot start or exits, and nncheck::Unsupported for a reply past the
  // memory limit (read no further). When a signal killed it (ORT crashed), this process dies of
  // the same signal, so that isolation reports the engine's crash as such.
  Reply call(const std::string& request, std::string& log);
  // What the worker wrote to its fd 3 since the last call; empties it.
  std::string takeFile3();

 private:
  void start();
  void stop();
  [[noreturn]] void died(const std::string& during);
  std::string readLog();

  std::string node_, script_;
  std::vector<std::pair<std::string, std::string>> environment_;
  pid_t pid_ = -1;
  int toWorker_ = -1, fromWorker_ = -1, log_ = -1, file3_ = -1;
};

}  // namespace nncheck::ort
