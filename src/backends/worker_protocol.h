// The worker protocol (docs/worker-protocol.md), version 1, in C++: its one reader and writer of
// every message, host side and worker side (the worker side serves the test vectors and C++
// test workers). Frames and tensors are wire.h's.
//
//   wire::sendFrame(fd, worker::helloBody());
//   worker::Facts facts = worker::readFacts(frame.body, "worker 'python3 e.py'");
//   wire::Message m;
//   worker::putRun(m, {.configuration = "O1"}, modelBytes, {{"x", &x}});
//   m.send(fd);
//   worker::Reply r = worker::takeReply(reader);
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/wire.h"
#include "nncheck/capabilities.h"
#include "nncheck/engine.h"
#include "nncheck/tensor.h"

namespace nncheck::worker {

inline constexpr int kProtocolVersion = 1;

// A message's first byte.
enum Kind : char {
  kHello = 'H',
  kRun = 'R',
  kFacts = 'F',
  kOutputs = 'O',
  kUnsupported = 'U',
  kError = 'E'
};

// How a standalone script runs a model on the engine alone (nncheck repro), if the worker says.
struct ReproducerFacts {
  std::string language;      // "python" or "javascript"; "" when the worker gives none
  std::string runtime;       // the language's version and its packages', as the worker runs them
  std::string requirements;  // what a script needs installed ("pip install ...")
  std::map<std::string, std::string> code;  // configuration -> the script's run()
};

// What a worker says of its engine, answering hello.
struct Facts {
  int protocol = kProtocolVersion;
  std::string name, version, description;
  std::vector<std::string> configurations;  // the default first; {""} for none
  std::string baseline;                     // "" for none
  // configuration -> the optimizations it may apply, each one `disabled` can switch off
  std::map<std::string, std::vector<std::string>> optimizations;
  // configuration -> optimizations `disabled` can switch off whose firing the engine cannot
  // tell (a compiler's switch, not a pass): searched for culprits, never named as applied
  std::map<std::string, std::vector<std::string>> unreported;
  // configuration -> optimizations it names as applied but cannot switch off (a release build's
  // passes): counted as reach, never searched for culprits
  std::map<std::string, std::vector<std::string>> fixed;
  std::string install;  // how to install what the worker needs
  // What every configuration shares (a converter, an importer): a failure at all of them is its
  // fault, one at some only is in what sets those apart. "" for nothing named.
  std::string sharedStage;
  // What the engine accepts; the defaults (any op, the generator's dtypes) when it says nothing.
  // Op weights travel as whole percentages (the protocol's JSON has no floating point).
  Capabilities capabilities;
  // Runs after which the host starts the worker afresh (an engine that leaks: its memory and
  // caches stay bounded); 0: never.
  int restartEvery = 0;
  // Seconds past a case's time limit a fresh worker's first run may take: starting the engine
  // (an import, a first compile's one-time loading) is no case's hang.
  int startSeconds = 0;
  // A fork of a worker that imported the engine and ran nothing is as fresh as a new worker:
  // fresh runs may be served so (NNCHECK_WORKER_FRESH_FORKS).
  bool freshForks = false;
  ReproducerFacts reproducer;
};

struct RunRequest {
  std::string configuration;
  std::vector<std::string> disabled;  // sorted
  std::string options = "{}";         // a JSON object of engine-specific asks
};

// A worker's answer to a run.
struct Reply {
  Kind kind = kOutputs;              // kOutputs, kUnsupported or kError
  std::vector<std::string> applied;  // kOutputs: the optimizations that changed the model
  TensorMap outputs;                 // kOutputs
  std::map<std::string, std::string> attachments;  // kOutputs: what `options` asked for
  std::string category, message;  // kUnsupported (category, message), kError (message)
  std::string trace;              // kError: its stack, if any
};

// The engine's part of a reproducer at a configuration (the worker's own text, without
// `,disable=`), as the facts give it; nullopt when they give none for it.
std::optional<ReproducerRecipe> reproducerAt(const Facts& facts, const std::string& configuration);

// --- host side ---
std::string helloBody();
// The facts, from a frame's body; throws nncheck::Error naming `who` when it is no facts
// message, or speaks another protocol version.
Facts readFacts(std::string_view body, const std::string& who);
// A run: its inputs in the order given (the model's graph inputs), sent from the tensors and the
// model's bytes where they are: both must outlive `m`.
void putRun(wire::Message& m, const RunRequest& request, const std::string& model,
            const std::vector<std::pair<std::string, const Tensor*>>& inputs);
// A reply, read from the frame's body (in memory or as it arrives); throws nncheck::Error naming
// the reader's `who` when it is malformed.
Reply takeReply(wire::Reader& in);

// --- worker side ---
std::string factsBody(const Facts& facts);
// A run request, whole: its header, model bytes and inputs (by name, in the order sent).
struct Run {
  RunRequest request;
  std::string model;
  std::vector<std::pair<std::string, Tensor>> inputs;
};
Run takeRun(wire::Reader& in);
// The reply, its outputs sent from its tensors: `reply` must outlive `m`.
void putReply(wire::Message& m, const Reply& reply);

// A JSON text as the protocol writes it: compact, keys sorted, UTF-8 (so one message has one
// encoding in every language); throws nncheck::Error when `json` is not a JSON object.
std::string canonicalJson(std::string_view json);

}  // namespace nncheck::worker
