// Coverage from an engine compiled with SanitizerCoverage comes back with an isolated run.
#include "backends/coverage.h"

#include <gtest/gtest.h>

#include "doubles/optimizer.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

// x -> Transpose -> Transpose -> y, which the optimizer's merge pass rewrites.
Model transposes() {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "transposes";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3, 4})};
  Node a = Node::make("Transpose", {"x"}, {"t"}, "a");
  a.attributes = {Attribute::ofInts("perm", {1, 2, 0})};
  Node b = Node::make("Transpose", {"t"}, {"y"}, "b");
  b.attributes = {Attribute::ofInts("perm", {0, 2, 1})};
  m.graph.nodes = {a, b};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {3, 2, 4})};
  return m;
}

Model relu() {
  Model m = transposes();
  m.graph.nodes = {Node::make("Relu", {"x"}, {"y"}, "r")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3, 4})};
  return m;
}

TEST(Coverage, AnInstrumentedEngineReportsWhatItReachedThroughIsolation) {
#ifndef NNCHECK_INSTRUMENTED_DOUBLE
  GTEST_SKIP() << "this build has no instrumented double (NNCHECK_FUZZ: libFuzzer owns the "
                  "coverage callbacks)";
#endif
  testing::Optimizer engine;
  const TensorMap in = {{"x", Tensor(DType::Float32, {2, 3, 4})}};
  for (Isolation mode : {Isolation::ForkPerRun, Isolation::Persistent}) {
    Isolated run = isolated(engine, 10s, mode);
    const RunOutcome merged = run.run(transposes(), in), plain = run.run(relu(), in);
    ASSERT_EQ(merged.kind, Outcome::Pass) << merged.message;
    EXPECT_FALSE(merged.coverage.empty());
    EXPECT_TRUE(std::is_sorted(merged.coverage.begin(), merged.coverage.end()));
    // The merge pass's code ran for one and not for the other.
    EXPECT_NE(merged.coverage, plain.coverage);
    // The same case reaches the same edges.
    EXPECT_EQ(run.run(transposes(), in).coverage, merged.coverage);
  }
}

TEST(Coverage, ResetForgetsWhatWasReached) {
#ifndef NNCHECK_INSTRUMENTED_DOUBLE
  GTEST_SKIP() << "this build has no instrumented double";
#endif
  testing::Optimizer engine;
  engine.run(transposes(), {{"x", Tensor(DType::Float32, {2, 3, 4})}});
  EXPECT_FALSE(coverage::collect().empty());
  coverage::reset();
  EXPECT_TRUE(coverage::collect().empty());
}

}  // namespace
}  // namespace nncheck
