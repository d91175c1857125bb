#include "nncheck/conformance.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "ops/op_spec.h"
#include "test_util.h"

namespace nncheck {
namespace {

// The whole ONNX node suite: no failure anywhere, and every registered op passes cases.
TEST(Conformance, NodeSuiteHasNoFailureAndEveryRegisteredOpPasses) {
  ConformanceReport r = runConformance({testing::nodeTestDir()});
  for (const CaseResult& c : r.cases)
    if (isFailure(c.outcome)) ADD_FAILURE() << c.dir << ": " << c.message;
  std::map<std::string, int> passedByOp;
  for (const CaseResult& c : r.cases)
    if (c.outcome == Outcome::Pass)
      for (const auto& op : c.ops) ++passedByOp[op];
  // Ops ONNX 1.12's suite has no case for; their kernels are checked against the spec's formula
  // in tests/ops/normalization_test.cpp. Fails once the suite gains a case, or the op is dropped.
  const std::set<std::string> noNodeTest = {"LpNormalization"};
  std::set<std::string> inSuite;
  for (const CaseResult& c : r.cases) inSuite.insert(c.ops.begin(), c.ops.end());
  for (const std::string& op : noNodeTest) {
    EXPECT_TRUE(ops::Registry::instance().find(op)) << op;
    EXPECT_FALSE(inSuite.count(op)) << op << " now has node tests";
  }
  for (const auto& spec : ops::Registry::instance().all()) {
    if (noNodeTest.count(spec->type)) continue;
    EXPECT_GT(passedByOp[spec->type], 0) << spec->type << " passes no node test";
  }
  EXPECT_EQ(r.failed, 0);
  EXPECT_GE(r.passed, 400);
  std::cout << r.passed << " passed, " << r.failed << " failed, " << r.skipped << " skipped\n";
}

// A skip carries a reason; tested on a case the spec declares unsupported.
TEST(Conformance, UnsupportedAttributeValueIsSkippedWithReason) {
  CaseResult c = runTestCase(testing::nodeTestDir() / "test_resize_upsample_scales_cubic");
  EXPECT_EQ(c.outcome, Outcome::Unsupported);
  EXPECT_EQ(c.category, "attribute");
  EXPECT_NE(c.message.find("cubic"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace nncheck
