// What an engine's translation of one node reads, whatever IR it writes: the node, its opset,
// the static facts of its inputs and outputs (every shape known), parameters that must be known
// before running (Reshape's shape, Slice's starts), and attributes with ONNX's defaults. The
// TorchScript and MLIR emitters both build on it.
//
//   NodeReading n(node, 14, inputs, outputs, "mlir");
//   int64_t axis = n.attrInt("axis", 0);
//   std::vector<int64_t> pads = n.constInts(1);   // Unsupported when computed
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nncheck/error.h"
#include "nncheck/graph.h"
#include "ops/infer.h"

namespace nncheck {

class NodeReading {
 public:
  NodeReading(const Node& node, int64_t opset, std::vector<ops::InputFacts> inputs,
              std::vector<ops::InputFacts> outputs, std::string engine);

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  const std::vector<ops::InputFacts>& inputFacts() const { return inputs_; }
  size_t outputCount() const { return outputs_.size(); }
  DType outDtype(size_t k) const { return outputs_.at(k).dtype; }
  const Shape& outShape(size_t k) const { return outputs_.at(k).shape; }

  // Input i's contents when known before running (an initializer), else null.
  const Tensor* constant(size_t i) const;
  // Input i's contents as integers; Unsupported when they are not known before running.
  std::vector<int64_t> constInts(size_t i) const;

  int64_t attrInt(const char* name, int64_t fallback) const;
  float attrFloat(const char* name, float fallback) const;
  std::string attrString(const char* name, const std::string& fallback) const;
  std::vector<int64_t> attrInts(const char* name, std::vector<int64_t> fallback = {}) const;
  // Transpose's perm, or ONNX's default when it has none: input 0's axes reversed.
  std::vector<int64_t> transposePerm() const;

  // nncheck::Unsupported naming the engine, the op, the node and why.
  [[noreturn]] void unsupported(const std::string& why) const;

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<ops::InputFacts> inputs_, outputs_;
  std::string engine_;
};

// The loop of a translation, whatever IR it writes: for each node in order, its emitter from the
// engine's table and the static facts of its inputs and outputs (empty names get empty facts),
// as visit(node, emitter, inputFacts, outputFacts). A node whose op has no emitter is Unsupported
// naming the engine, the op and the node.
template <class EmitterTable, class Visit>
void forEachNodeToTranslate(const Graph& g, const std::map<std::string, ops::InputFacts>& facts,
                            const EmitterTable& table, const std::string& engine, Visit&& visit) {
  const auto factsOf = [&](const std::vector<std::string>& names) {
    std::vector<ops::InputFacts> out;
    for (const std::string& v : names) out.push_back(v.empty() ? ops::InputFacts{} : facts.at(v));
    return out;
  };
  for (const Node& n : g.nodes) {
    const auto e = table.find(n.opType);
    if (e == table.end())
      throw Unsupported("op not registered",
                        engine + ": " + n.opType + " node '" + n.name + "' is not translated");
    visit(n, e->second, factsOf(n.inputs), factsOf(n.outputs));
  }
}

// Axis a of a rank-r tensor, negative counted from the end, as ONNX normalizes it.
inline int64_t normAxis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }
// Each axis normalized, sorted.
std::vector<int64_t> normAxes(std::vector<int64_t> axes, int64_t rank);
// 0, 1, ..., rank - 1.
std::vector<int64_t> allAxes(int64_t rank);

}  // namespace nncheck
