// Random valid ONNX models, grown node by node from the op library (the method of NNSmith):
// forward insertion (a new op consumes existing values), backward insertion (a new op produces
// the value of a graph input, which creates multi-input patterns), weights and shape operands
// as initializers, several outputs. Each op's own shape rule judges every candidate; values are
// sampled concretely first, and z3 solves only what sampling cannot.
//
//   nncheck::GeneratorConfig cfg;
//   cfg.nodes = 10;
//   nncheck::Model m = nncheck::generateModel(cfg, /*seed=*/42);   // same seed, same bytes
//   nncheck::TestCase tc = nncheck::makeTestCase(cfg, 42);          // the model and its inputs
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nncheck/capabilities.h"
#include "nncheck/graph.h"
#include "nncheck/test_case.h"

namespace nncheck {

// The most nodes a generated model may have: growth slows with size (1,000 nodes take seconds).
inline constexpr int kMaxGeneratedNodes = 1000;

struct GeneratorConfig {
  int nodes = 10;                    // 1 .. kMaxGeneratedNodes
  std::vector<std::string> ops;      // allowed ops; empty: every registered op
  std::vector<std::string> denyOps;  // never these
  // Dtypes of the values flowing through the graph (shape operands are int64 regardless).
  std::vector<DType> dtypes = {DType::Float32, DType::Int64, DType::Bool};
  int64_t opset = 17;
  int64_t maxElements = 65536;  // per tensor
  int64_t maxRank = 5;
  int64_t minDim = 1, maxDim = 8;     // dims of graph inputs
  bool weightsAsInitializers = true;  // Conv's W, BatchNormalization's stats, ...: initializers
  std::map<std::string, double> opWeights;  // relative frequency per op (default 1)
  // Pattern-directed generation. Producer>consumer pairs made likelier: where a value the
  // producer op computed is available, the consumer op is drawn `weight` times as often and
  // reads that value first ({{"MatMul", "Add"}, 10}).
  std::map<std::pair<std::string, std::string>, double> pairWeights;
  // Seed patterns (loadSeedPatterns): with chance seedShare a model starts from a part of one of
  // them (at most `nodes` nodes, renamed) and grows around it, backward insertions feeding it and
  // forward ones consuming it. They must be valid at `opset` with finite values. Shared, so that
  // copies of a config are cheap.
  std::shared_ptr<const std::vector<TestCase>> seeds;
  double seedShare = 0.5;
  double backwardProbability = 0.3;  // share of insertions that are backward
  // Constant subexpressions, which every optimizer folds and no forward or backward insertion
  // forms: the share of insertions that make an initializer the model reads the output of a node
  // reading only initializers (chains of them too; its readers then mix constant and computed
  // operands).
  double constantShare = 0.1;
  // The blocks real networks are made of, which optimizers are written for (Conv ->
  // BatchNormalization -> Relu, attention, LayerNormalization's chain, QDQ pairs; the table is
  // blockPrior()): the share of insertions that grow one, node by node. 0.3 found most of
  // bench/bug_finding_bench's sweep (0.1 to 0.6) while most insertions stay blind, where kernel
  // bugs are found.
  double blockShare = 0.3;
  // Shape operands (Reshape's shape, Slice's starts) stay initializers. When false, constant
  // subexpressions compute some of them too, reproducing their contents (an engine must fold
  // them to know its shapes).
  bool shapeOperandsAsInitializers = false;
  // Equivalence rewrites drawn for each case (TestCase::rewrites, nncheck/variants.h), from its
  // seed: what the equivalence oracle compares the model with. 0: none.
  int rewrites = 0;
  bool useSolver = true;  // let z3 solve what sampling cannot
  // The chance that z3 gets to solve an op after its concrete draws all failed (z3 costs about
  // a millisecond, hundreds of draws).
  double solverShare = 0.3;
  // Keep every value finite while growing (nncheck/value_search.h): a node whose values turn
  // NaN, infinite or beyond 1e6 gets value search over the inputs and weights of the model so
  // far, and is taken back when none keep it finite. Take the inputs from makeTestCase.
  bool finiteValues = true;
  // Grow If, Loop and Scan nodes too, each body a small graph (one to three nodes) grown from
  // values it captures from the enclosing graph. Off by default: few engines take control flow.
  bool controlFlow = false;
};

GeneratorConfig configFor(const Capabilities& caps, int nodes = 10);

struct GenerationStats {
  int64_t z3Checks = 0;                         // satisfiability checks made
  int64_t z3Contexts = 0;                       // fresh contexts created (at most one per model)
  int64_t attempts = 0;                         // candidate insertions tried
  int64_t rejected = 0;                         // candidates the shape rules or limits rejected
  int64_t solvedInsertions = 0;                 // insertions z3 completed
  std::map<std::string, int64_t> z3ChecksByOp;  // where the solver time goes
  // cfg.finiteValues: value searches run, nodes taken back because no values kept them finite,
  // and the time spent computing and searching values.
  int64_t valueSearches = 0;
  int64_t valueRejected = 0;
  double valueSeconds = 0;
};

// Throws nncheck::Error naming the option that is wrong (an unknown op, a dtype the reference
// cannot compute, an op no allowed dtype admits, an opset outside 13..17, ...).
void validateConfig(const GeneratorConfig& cfg);

// The ops the generator may use under cfg (allowed, and admitting an allowed dtype at its opset).
std::vector<std::string> usableOps(const GeneratorConfig& cfg);

// A model of exactly cfg.nodes nodes, valid by nncheck::checkValid. Deterministic: the same
// config and seed give the same model in any process, at any position in a run.
Model generateModel(const GeneratorConfig& cfg, uint64_t seed, GenerationStats* stats = nullptr);

// Values for the model's graph inputs: floats in [-1, 1], small integers, random bools (not
// searched: makeTestCase gives a generated model's finite ones).
TensorMap randomInputs(const Model& model, uint64_t seed);

// A generated model and its input values. With cfg.finiteValues (the default) every value of
// the model is finite and within 1e6 on these inputs and weights (value search ran as the model
// grew); without, the inputs are randomInputs(model, seed). Deterministic like generateModel,
// whose model it is.
TestCase makeTestCase(const GeneratorConfig& cfg, uint64_t seed, GenerationStats* stats = nullptr);

// A mutant of `parent` (coverage-guided generation): the parent grown by a few nodes, or
// without one node and regrown, or a window of its nodes regrown around. Every kept node sees the
// values it saw in the parent (a value whose producer is left out becomes a graph input holding
// it); new nodes are drawn, judged by their ops' rules and kept finite as in makeTestCase, so the
// mutant is valid by construction. At most twice cfg.nodes nodes. Deterministic like
// makeTestCase.
TestCase mutateTestCase(const GeneratorConfig& cfg, const TestCase& parent, uint64_t seed,
                        GenerationStats* stats = nullptr);

// What generation aims at, as found in a model (gen --stats): the nodes computing only from
// initializers (constant subexpressions), and the blocks of the prior it contains whole, by name.
struct AimedPatterns {
  int64_t constantNodes = 0;
  std::vector<std::string> blocks;
};
AimedPatterns aimedPatternsIn(const Model& model);
// The prior's blocks (GeneratorConfig::blockShare), by name, in its table's order.
std::vector<std::string> blockNames();

// Seed patterns for cfg.seeds: the model of every backend-test case folder at or below `dir` (a
// corpus; its test_data_set_0 inputs are kept) and every *.onnx file right in it (random inputs),
// or the one file `dir` names; each made valid at cfg.opset, given finite values by value
// search, and run by the reference. Throws nncheck::Error naming a file that is not usable.
std::shared_ptr<const std::vector<TestCase>> loadSeedPatterns(const std::filesystem::path& dir,
                                                              const GeneratorConfig& cfg);

}  // namespace nncheck
