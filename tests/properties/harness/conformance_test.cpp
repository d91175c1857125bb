#include "harness/conformance.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "nncheck/onnx_io.h"
#include "ops/op_spec.h"
#include "ops/upgrade.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

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

// ONNX's test data beyond the node tests (PyTorch exports, mostly opset 6): a model of an opset
// older than nncheck's is upgraded by ONNX's version converter as it is read, and said so; one the
// converter makes invalid (PRelu-6's channel slope, which PRelu-7 broadcasts from the right) is
// skipped with the converter named, never failed.
TEST(Conformance, OlderOpsetsAreUpgradedAndSaidSo) {
  const fs::path data = testing::nodeTestDir().parent_path();
  CaseResult addmm = runTestCase(data / "pytorch-operator" / "test_operator_addmm");
  EXPECT_EQ(addmm.outcome, Outcome::Pass) << addmm.message;
  EXPECT_EQ(addmm.upgraded, "upgraded from opset 6 to 13 by ONNX's version converter");
  CaseResult prelu = runTestCase(data / "pytorch-converted" / "test_PReLU_1d_multiparam");
  EXPECT_EQ(prelu.outcome, Outcome::Unsupported) << prelu.message;
  EXPECT_EQ(prelu.category, "upgrade");
  EXPECT_NE(prelu.message.find("ONNX's version converter"), std::string::npos) << prelu.message;
  Model m = loadModel(data / "pytorch-operator" / "test_operator_addmm" / "model.onnx");
  EXPECT_FALSE(ops::upgradeOldOpset(m).empty());
  EXPECT_EQ(m.defaultOpset(), ops::kUpgradeOpset);
  // A model of an older opset whose op versions nncheck takes stays as it is: the import is
  // lossless, and ONNX's node tests run as they were written.
  const Model relu = loadModel(testing::nodeTestDir() / "test_relu" / "model.onnx");
  Model kept = relu;
  kept.opsets = {{"", 11}};
  EXPECT_EQ(ops::upgradeOldOpset(kept), "");
  EXPECT_EQ(kept.defaultOpset(), 11);
}

}  // namespace
}  // namespace nncheck
