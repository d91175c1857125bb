// Coverage from an engine compiled with SanitizerCoverage comes back with an isolated run.
#include "backends/coverage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "backends/pc_table_fixture.h"
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
    // Relu first: a worker's first run also reaches what runs once a process (a function-local
    // static's initializer), in a real engine as in this double, whose instrumented copies of
    // inline library functions the whole test program may link.
    const RunOutcome plain = run.run(relu(), in), merged = run.run(transposes(), in);
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

// An engine that names the rewrites it made: "MergeTransposes" for two Transposes in a row, and
// "NoOp" once it ran anything; its run() throws after naming them when told to.
class NamingEngine : public Backend {
 public:
  std::string name() const override { return "naming"; }
  TensorMap run(const Model& m, const TensorMap& in) override {
    applied_ = {"NoOp"};
    if (m.graph.nodes.size() == 2) applied_.insert(applied_.begin(), "MergeTransposes");
    return ReferenceBackend().run(m, in);
  }
  std::vector<std::string> optimizationsApplied() const override { return applied_; }

 private:
  std::vector<std::string> applied_;
};

TEST(Coverage, NamedOptimizationsComeBackAsNamesAndAsFeaturesOfThemAndTheirPairs) {
  NamingEngine engine;
  const TensorMap in = {{"x", Tensor(DType::Float32, {2, 3, 4})}};
  for (Isolation mode : {Isolation::ForkPerRun, Isolation::Persistent}) {
    Isolated run = isolated(engine, 10s, mode);
    const RunOutcome two = run.run(transposes(), in), one = run.run(relu(), in);
    ASSERT_EQ(two.kind, Outcome::Pass) << two.message;
    EXPECT_EQ(two.optimizations, (std::vector<std::string>{"MergeTransposes", "NoOp"}));
    EXPECT_EQ(one.optimizations, std::vector<std::string>{"NoOp"});
    // Two names and their pair: three features; one name: one, shared with the first. (Below
    // them, counters of instrumented code this test binary shares with the optimizer double.)
    const auto named = [](const RunOutcome& r) {
      std::vector<uint32_t> out;
      for (uint32_t f : r.coverage)
        if (f >= 0x80000000u) out.push_back(f);
      return out;
    };
    EXPECT_EQ(named(two).size(), 3u);
    ASSERT_EQ(named(one).size(), 1u);
    EXPECT_TRUE(std::binary_search(two.coverage.begin(), two.coverage.end(), named(one)[0]));
  }
  std::vector<uint32_t> features = {7};
  coverage::addOptimizationFeatures({"A", "B", "C"}, features);
  EXPECT_EQ(features.size(), 1u + 3u + 3u) << "three names, three pairs, and the counter";
  EXPECT_TRUE(std::is_sorted(features.begin(), features.end()));
  EXPECT_LT(features.front(), 0x80000000u) << "counters stay below the names' features";
  EXPECT_GE(features[1], 0x80000000u);
}

#ifdef NNCHECK_PC_TABLE_FIXTURE
std::vector<std::string> namesOf(const coverage::FunctionReach& r) {
  std::vector<std::string> out;
  for (const auto& f : r.unreached) out.push_back(f.name);
  return out;
}
#endif

// With a pc-table, the functions none of whose blocks a run reached are named, symbolized from
// the module's symbol table, largest first; a function once reached leaves the list.
TEST(Coverage, NamesTheFunctionsNoRunReachedLargestFirst) {
#ifndef NNCHECK_PC_TABLE_FIXTURE
  GTEST_SKIP() << "this build has no module with a pc-table (no clang, or NNCHECK_FUZZ)";
#else
  const std::string large = "pc_table_fixture::neverReachedLarge(int)",
                    small = "pc_table_fixture::neverReachedSmall(int)",
                    withLibrary = "pc_table_fixture::neverReachedUsingTheLibrary(int)";
  coverage::reset();
  EXPECT_EQ(pc_table_fixture::reached(1), 2);
  coverage::Reached all;
  all.add(coverage::collect());
  coverage::FunctionReach r = all.functions();
  // The module's own four functions; std::vector's code it instantiates is left out.
  EXPECT_EQ(r.functions, 4u);
  EXPECT_EQ(r.reachedFunctions, 1u);
  std::vector<std::string> names = namesOf(r);
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()),
            (std::set<std::string>{large, small, withLibrary}));
  for (size_t i = 1; i < r.unreached.size(); ++i)
    EXPECT_GE(r.unreached[i - 1].blocks, r.unreached[i].blocks) << "largest first";
  EXPECT_LT(std::find(names.begin(), names.end(), large) - names.begin(),
            std::find(names.begin(), names.end(), small) - names.begin());
  EXPECT_EQ(r.summary(1).rfind("engine functions never reached: 3 of 4 (", 0), 0u) << r.summary();
  EXPECT_NE(r.summary(1).find("largest first: " + names[0] + " "), std::string::npos)
      << r.summary(1);
  EXPECT_NE(r.summary(1).find(", ..."), std::string::npos) << "one of three shown";

  coverage::reset();
  EXPECT_EQ(pc_table_fixture::neverReachedSmall(2), 4);
  all.add(coverage::collect());
  names = namesOf(all.functions());
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()),
            (std::set<std::string>{large, withLibrary}));
  EXPECT_EQ(coverage::Reached().functions().summary(), "")
      << "a module no run entered is not the engine's";
#endif
}

TEST(Coverage, NoPcTableNoReport) { EXPECT_EQ(coverage::FunctionReach().summary(), ""); }

}  // namespace
}  // namespace nncheck
