// A deliberately buggy optimizing engine: eight rewrite passes of the kind graph compilers have,
// each with a planted bug that fires only on its pattern and a parameter condition. It rewrites
// the model, then runs the rewritten one on the reference. Its code is compiled with
// SanitizerCoverage (trace-pc), so coverage-guided generation sees which rewrites a case reached;
// a test or benchmark proves that a property finds each bug, and that with no bug enabled the
// optimizer passes.
//
//   nncheck::testing::Optimizer o(nncheck::testing::Optimizer::TransposeMergeOrder);
//   nncheck::TensorMap out = o.run(model, inputs);
#pragma once

#include <string>
#include <vector>

#include "nncheck/backend.h"

namespace nncheck::testing {

class Optimizer : public Backend {
 public:
  enum Bug : unsigned {
    None = 0,
    // Add(MatMul(a, b), c) -> Gemm(a, b, c); bug: a rank-1 c of a square product is broadcast
    // as a column.
    MatMulAddColumn = 1u << 0,
    // Transpose(Transpose(x, p1), p2) -> Transpose(x, p1 o p2); bug: composed in the wrong order
    // at rank 3 or more.
    TransposeMergeOrder = 1u << 1,
    // Reshape(Reshape(x, s1), s2) -> Reshape(x, s2); bug: also when s2 holds a 0 (which copies a
    // dim of the input, now another one).
    ReshapeMergeZero = 1u << 2,
    // Conv(Pad(x)) -> Conv(x) with the pads added; bug: also for Pad's reflect and edge modes.
    PadConvMode = 1u << 3,
    // Cast(Cast(x, T1), T2) with x of T2 -> x; bug: also when T1 is an integer type or bool.
    CastRoundTrip = 1u << 4,
    // Unsqueeze(Squeeze(x, a1), a2) -> x when a1 == a2; bug: also when the axes differ.
    SqueezeUnsqueezeAxes = 1u << 5,
    // Constant folding: a node whose inputs are all initializers -> initializers holding its
    // outputs; bug: the node is evaluated with its attributes dropped (their defaults).
    ConstantFoldAttributes = 1u << 6,
    // BatchNormalization(Conv(x, W, b)) with constant W and statistics -> Conv(x, W', b'); bug:
    // for a Conv without a bias, b' leaves out BatchNormalization's mean.
    ConvBnNoBias = 1u << 7,
  };
  static std::vector<Bug> allBugs();
  static std::string bugName(Bug b);
  // The producer and consumer ops of the bug's rewrite: {"Transpose", "Transpose"} (constant
  // folding's: none).
  static std::pair<std::string, std::string> patternOf(Bug b);

  explicit Optimizer(unsigned bugs = None) : bugs_(bugs) {}
  std::string name() const override;
  // The front end of a typical graph compiler: the ops its rewrites match and their usual
  // neighbours. Generation over all of nncheck's ops forms the rewrites' patterns too rarely
  // for a short test (bench/bug_finding_bench measures that).
  Capabilities capabilities() const override;
  TensorMap run(const Model& model, const TensorMap& inputs) override;
  // The rewritten model (shapes and types come from a reference run on `inputs`).
  Model optimize(const Model& model, const TensorMap& inputs) const;

 private:
  unsigned bugs_;
};

}  // namespace nncheck::testing
