// Oracles by name: the built-in ones, clear errors, and the baseline oracle judging what the
// reference cannot compute.
#include "nncheck/oracle.h"

#include <gtest/gtest.h>

#include "doubles.h"
#include "nncheck/error.h"
#include "test_util.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

TEST(Oracles, TheBuiltInOnesAreRegisteredWithDescriptions) {
  for (const char* name : {"reference", "baseline", "deterministic"}) {
    ASSERT_TRUE(oracles().contains(name)) << name;
    EXPECT_FALSE(oracles().at(name).description.empty()) << name;
  }
  EXPECT_TRUE(oracles().at("baseline").needsBaseline);
  EXPECT_FALSE(oracles().at("reference").needsBaseline);
}

TEST(Oracles, AnUnknownNameListsTheRegisteredOnesAndEntriesNeedAProperty) {
  try {
    oracles().at("nosuch");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown oracle 'nosuch' (known: "), std::string::npos) << what;
    EXPECT_NE(what.find("baseline"), std::string::npos) << what;
  }
  OracleRegistry r;
  EXPECT_THROW(r.add({.name = "no-property"}), Error);
  EXPECT_THROW(r.add({.check = [](const OracleEngines&, const TestCase&) {}}), Error);
  r.add({.name = "x", .check = [](const OracleEngines&, const TestCase&) {}});
  EXPECT_THROW(r.add({.name = "x", .check = [](const OracleEngines&, const TestCase&) {}}), Error);
}

TEST(Oracles, EachJudgesByItsOwnProperty) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  const TestCase tc = testing::matMulRelu(false);
  const Isolated on = isolated(fused, 5s), off = isolated(unfused, 5s);
  EXPECT_EQ(judgeWith(oracles().at("reference"), {on}, tc).outcome, Outcome::Mismatch);
  EXPECT_EQ(judgeWith(oracles().at("reference"), {off}, tc).outcome, Outcome::Pass);
  const Verdict v = judgeWith(oracles().at("baseline"), {on, &off}, tc);
  EXPECT_EQ(v.outcome, Outcome::Mismatch);
  EXPECT_NE(
      v.message.find("outputs differ from the baseline double:fused-matmul-relu (fusion off)"),
      std::string::npos)
      << v.message;
  // Localized against the baseline's values: the fused pair's Relu.
  ASSERT_TRUE(v.localize);
  const std::optional<Divergence> d = v.localize(false);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->opType, "Relu");
  EXPECT_EQ(judgeWith(oracles().at("deterministic"), {on}, tc).outcome, Outcome::Pass);
}

TEST(Oracles, TheBaselineJudgesAModelTheReferenceDoesNotCompute) {
  testing::CustomTwice optimizing(true), baseline(false);
  const Isolated engine = isolated(optimizing, 5s), base = isolated(baseline, 5s);
  const TestCase negative = testing::customTwiceCase({1, -2}),
                 positive = testing::customTwiceCase({1, 2});
  EXPECT_EQ(judgeWith(oracles().at("reference"), {engine}, negative).outcome, Outcome::Unsupported);
  EXPECT_EQ(judgeWith(oracles().at("baseline"), {engine, &base}, negative).outcome,
            Outcome::Mismatch);
  EXPECT_EQ(judgeWith(oracles().at("baseline"), {engine, &base}, positive).outcome, Outcome::Pass);
  // A case the baseline does not run is no test of the engine.
  testing::RejectsTanh rejects;
  const Isolated rejecting = isolated(rejects, 5s);
  const TestCase withTanh = [] {
    TestCase tc = testing::matMulRelu(false);
    tc.model.graph.nodes[1].opType = "Tanh";
    return tc;
  }();
  EXPECT_EQ(judgeWith(oracles().at("baseline"), {base, &rejecting}, withTanh).outcome,
            Outcome::Unsupported);
}

TEST(Oracles, DeterministicCatchesAnEngineWhoseRunsDiffer) {
  testing::TempDir tmp("oracles");
  testing::RacyTanh racy(tmp.path() / "counter");
  TestCase tc = testing::matMulRelu(false);
  tc.model.graph.nodes[1].opType = "Tanh";
  const Verdict v = judgeWith(oracles().at("deterministic"), {isolated(racy, 5s)}, tc);
  EXPECT_EQ(v.outcome, Outcome::Mismatch);
  EXPECT_NE(v.message.find("two runs of the same case differ"), std::string::npos) << v.message;
}

}  // namespace
}  // namespace nncheck
