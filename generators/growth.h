// The core of model generation: a graph being grown, and one insertion into it. An insertion
// draws a candidate concretely (op, inputs, attributes, fresh leaves, shape-operand contents) and
// lets the op's own shape rule judge it; after a few rejected draws, z3 solves the same rule with
// the draw's structure kept and its numbers freed. With cfg.finiteValues, each committed node's
// values are computed at once and a node that makes any value NaN, infinite or huge gets value
// search on the model so far (inputs and weights move); if no values keep it finite, the node
// is taken back.
//
// The ways of growing (generators/grow_*.cpp: plain growth, mutation, seeds, control flow,
// constant subexpressions, blocks) are built on this interface; an Aim says what one insertion
// must be.
//
//   gen::Growth g(cfg, table, seed, stats);
//   g.startWithInput();
//   g.insert({.op = "Relu"});          // a Relu reading some value
//   TestCase tc = g.assemble();
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/rng.h"
#include "generators/op_table.h"
#include "nncheck/generator.h"
#include "nncheck/test_case.h"
#include "ops/infer.h"
#include "ops/rule.h"

namespace z3 {
class context;
}

namespace nncheck::gen {

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  enum class Kind { Input, Initializer, Computed } kind = Kind::Input;
  Tensor data;  // initializers; graph inputs too with cfg.finiteValues
  bool hasData = false;
  std::string producer = {};  // computed values: the op computing it (pair weights)
};

// What one insertion must be. The default: a forward node of any op, reading any values.
struct Aim {
  std::string op = {};  // the op (any, when empty)
  // Backward: the node computes graph input `placeholder` (one is picked when -1) from fresh
  // leaves, and goes first.
  bool backward = false;
  // Forward, when >= 0: the node computes this value (of its dtype and shape) and goes at
  // position `at`, before the nodes reading it; it reads nothing computed at or after `at`.
  int placeholder = -1;
  size_t at = 0;
  // Forward: input index -> the value it reads (input 0: any value when absent; others: a drawn
  // operand). Blocks wire their nodes to each other with it.
  std::map<size_t, int> reads = {};
  // Input index -> the contents of the fresh initializer it reads (a block's constants: Pow's
  // exponent 2, Gelu's sqrt(2)); cast to the input's dtype, broadcast by the op.
  std::map<size_t, double> constants = {};
  // Attributes set as given, the rest drawn (ReduceMean's axes = [-1], keepdims = 1).
  std::vector<Attribute> attributes = {};
  // Fresh leaves of the node are initializers (a constant subexpression).
  bool constantLeaves = false;
};

class Growth {
 public:
  // `body`: growing a subgraph, whose fresh leaves are initializers of its own.
  Growth(const GeneratorConfig& cfg, const std::vector<OpEntry>& table, uint64_t seed,
         GenerationStats& stats, bool body = false);
  ~Growth();

  // One insertion; false when no candidate fit within the tries (the graph is unchanged).
  bool insert(const Aim& aim);
  // The nodes `keep` of tc (with every value `values` of tc's reference run), renamed into this
  // graph; a value computed by a node left out becomes a graph input holding it. Returns tc's
  // value names mapped to this graph's.
  std::map<std::string, std::string> adopt(const TestCase& tc, const std::vector<size_t>& keep,
                                           const TensorMap& values);
  // A fresh graph input of a drawn dtype and shape (the first leaf, or a new path after a dead
  // end); rank from lo to hi, within cfg.maxRank.
  void addInput(int64_t lo, int64_t hi);
  // Appends a node computed outside insert (control flow, whose bodies are grown separately);
  // with cfg.finiteValues, taken back (false) when no values keep it finite.
  bool appendNode(Node node, const std::vector<ops::TensorType>& outputs, const ops::OpSpec& spec);
  // The model, and with cfg.finiteValues its input values (else inputs are left empty).
  TestCase assemble() const;

  const GeneratorConfig& cfg() const { return cfg_; }
  const std::vector<OpEntry>& table() const { return table_; }
  // The table's entry of `op`; null when the config does not allow it.
  const OpEntry* entry(const std::string& op) const;
  uint64_t seed() const { return seed_; }
  Rng& rng() { return rng_; }
  GenerationStats& stats() { return stats_; }
  std::vector<Value>& values() { return values_; }
  std::vector<Node>& nodes() { return nodes_; }
  std::string fresh(const char* prefix) {
    std::string name = prefix;  // appended: GCC 12 warns falsely on "lit" + string here
    name += std::to_string(counter_++);
    return name;
  }
  int counter() const { return counter_; }
  void setCounter(int c) { counter_ = c; }
  int indexNamed(const std::string& name) const;  // -1 when no value has the name
  Value* valueNamed(const std::string& name);
  bool withinLimits(const Shape& s) const { return shapeWithinLimits(cfg_, s); }
  DType drawLeafDType(const std::vector<DType>& allowed);
  // The values whose contents matter: read where not any number will do (a shape operand,
  // indices, a divisor, a weight the config keeps an initializer), or computing, through any
  // nodes, one that is.
  std::set<std::string> contentsMatter() const;
  // The (node, input) pairs reading value `name`.
  std::vector<std::pair<size_t, size_t>> readersOf(const std::string& name) const;
  // Makes initializer `value` computed by `node`, put first. The node reads only `leaves` (fresh
  // initializers, added now) and reproduces the value's contents exactly, so no other value
  // changes.
  void computeInitializer(int value, Node node, std::vector<Value> leaves);

  // Grows an op with bodies (If, Loop, Scan) drawn by a plain insertion; unset: such ops are
  // skipped.
  std::function<bool(Growth&, const OpEntry&)> growControlFlow;

 private:
  struct InputChoice;
  struct Candidate;
  Shape drawShape(int64_t rank);
  int64_t drawDim();
  void drawAttributes(Candidate& c, const Aim& aim, int64_t rank0);
  std::optional<Candidate> drawCandidate(const OpEntry& e, const Aim& aim);
  std::optional<Candidate> drawUnchecked(const OpEntry& e, const Aim& aim);
  // `later`: the values a node placed before others may not read.
  bool judge(Candidate& c, const Aim& aim, const std::set<std::string>& later);
  bool solve(Candidate& c, const Aim& aim, const std::set<std::string>& later);
  void commit(Candidate& c, const Aim& aim);
  bool place(Candidate& c, const Aim& aim);
  bool keepsFinite(const ops::OpSpec& spec, bool wholeModel);
  double pairWeight(const std::string& producer, const std::string& consumer) const;
  // How much likelier op `e` is as the next forward node: its largest pair weight with the
  // producer of a value it could read first.
  double pairBoost(const OpEntry& e) const;
  std::vector<ops::InputFacts> facts(const Candidate& c) const;
  z3::context& z3ctx();

  const GeneratorConfig& cfg_;
  const std::vector<OpEntry>& table_;
  uint64_t seed_;
  Rng rng_;
  GenerationStats& stats_;
  bool body_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  int counter_ = 0;
  TensorMap current_;  // with cfg.finiteValues: every value of the model so far
  std::unique_ptr<z3::context> z3_;
};

}  // namespace nncheck::gen
