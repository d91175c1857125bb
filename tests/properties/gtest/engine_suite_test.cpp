// EngineSuite: test names as GoogleTest takes them, and the cases of a suite: only its ops, less
// those of the known failures in its corpus.
#include "nncheck/engine_suite.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <set>

namespace nncheck {
namespace {

TEST(EngineSuite, AConfigurationIsATestName) {
  EXPECT_EQ(EngineSuite::testName("opt=O3+opt-in"), "O3_opt_in");
  EXPECT_EQ(EngineSuite::testName("mode=performance-no-snippets"), "performance_no_snippets");
  EXPECT_EQ(EngineSuite::testName("pipeline=zero"), "zero");
}

TEST(EngineSuite, ItsCasesAreOfItsOpsLessThoseOfKnownFailures) {
  // IREE's corpus knows MaxPool (and EyeLike, GRU, ...) to fail; the reference takes every op.
  const EngineSuite suite{
      "reference", {""}, NNCHECK_SOURCE_DIR "/examples/iree/corpus", {"MaxPool", "Relu", "Add"}};
  const rc::Gen<TestCase> cases = suite.cases("");
  std::set<std::string> seen;
  for (int i = 0; i < 40; ++i)
    for (const Node& n : cases(rc::Random(static_cast<uint64_t>(i)), 20).value().model.graph.nodes)
      seen.insert(n.opType);
  EXPECT_FALSE(seen.empty());
  // The reference names no ops (it takes any): the suite's list still holds.
  EXPECT_EQ(seen.count("MaxPool"), 0u) << "a known failure's op";
  for (const std::string& op : seen) EXPECT_TRUE(op == "Relu" || op == "Add") << op;
}

}  // namespace
}  // namespace nncheck
