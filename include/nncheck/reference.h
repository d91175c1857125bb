// The reference interpreter: runs a model by the ONNX spec with nncheck's op library.
//
//   nncheck::TensorMap out = nncheck::runReference(model, {{"x", x}});
//   const nncheck::Tensor& y = out.at("y");
//   std::vector<nncheck::Tensor> z = nncheck::runReferenceNode(relu, {x});   // one node
//
// Every node is checked by its op's shape rule before its kernel runs, so a malformed model
// fails with a message naming the node, the op and the shapes. Ops, dtypes or attribute values
// outside the op library throw nncheck::Unsupported, and so does a run that would hold more
// memory than its limit (memoryLimit()) or take longer than its time limit
// (referenceTimeLimit()).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nncheck/backend.h"
#include "nncheck/graph.h"

namespace nncheck {

// Runs `model` on `inputs` (one per graph input that is not an initializer) and returns the
// graph outputs by name.
TensorMap runReference(const Model& model, const TensorMap& inputs);

// Throws nncheck::Error naming the input when `inputs` are not the model's graph inputs (less its
// initializers) of their declared dtypes and static shapes: what runReference checks first, and
// what a case must pass before any engine is judged on it.
void checkInputs(const Model& model, const TensorMap& inputs);

// Like runReference, and also returns every intermediate value (for localization).
TensorMap runReferenceAllValues(const Model& model, const TensorMap& inputs);

// Like runReference, with every float data input (not shape operands) of every node multiplied by
// (1 + d), d drawn uniformly in [-ulps, ulps] times its dtype's epsilon (2^-23 for float32), afresh
// for each node and element, from `seed`: the inputs a backward-stable float implementation of each
// op computes exactly. An op that declares an absolute output error (LogSoftmax, the
// normalizations) also has each output element moved by up to `ulps` times that, up for odd
// seeds and down for even ones (a Relu downstream sees both sides in two runs). The spread of a
// few such runs estimates how far a correct engine may be from the reference
// (nncheck/tolerance.h, roundingAllowance).
TensorMap runReferencePerturbed(const Model& model, const TensorMap& inputs, uint64_t seed,
                                double ulps);

// Runs one node on its input values (in the node's input order; an empty tensor for an omitted
// optional input) at `opset`, and returns its outputs in order.
std::vector<Tensor> runReferenceNode(const Node& node, const std::vector<Tensor>& inputs,
                                     int64_t opset = 14);

// The memory one run may hold (4 GiB unless set), of the reference and of an isolated engine
// alike. The reference's run counts its tensors: its inputs, initializers and every value
// computed so far; a node whose outputs would take the run past it throws Unsupported("memory")
// naming the node, before anything is allocated, so a tiny model asking for gigabytes is a case
// the reference does not compute rather than an out-of-memory kill. No single tensor exceeds
// kMaxTensorBytes whatever the limit. An engine's run counts what its processes hold, and what
// its reply carries (nncheck/isolation.h): past it, the run is killed and Unsupported too.
inline constexpr int64_t kDefaultMemoryLimit = int64_t{4} << 30;
int64_t memoryLimit();
// Sets the limit for every run that starts afterwards, in every thread; returns the previous one.
int64_t setMemoryLimit(int64_t bytes);

// The time one run may take (60 s unless set). A valid model can loop for hours (two nested
// Loops of 100,000 trips) or multiply 8192x8192 matrices; past the limit the run stops at the
// next node or inside the long kernel and throws Unsupported("time") naming the node, so the
// case is skipped as one the reference does not compute. Sets, like the memory limit, apply to
// runs that start afterwards, in every thread; the previous limit is returned. From 1 ms to one
// week.
inline constexpr std::chrono::milliseconds kDefaultReferenceTimeLimit{60'000};
std::chrono::milliseconds referenceTimeLimit();
std::chrono::milliseconds setReferenceTimeLimit(std::chrono::milliseconds limit);

// nncheck's reference interpreter as a backend.
class ReferenceBackend final : public Backend {
 public:
  std::string name() const override { return "reference"; }
  TensorMap run(const Model& model, const TensorMap& inputs) override {
    return runReference(model, inputs);
  }
};
Backend& reference();

}  // namespace nncheck
