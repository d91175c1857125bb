// Root causes: what the patterns of one bug share, and the known bugs a campaign recognises.
#include "harness/root_cause.h"

#include <gtest/gtest.h>

#include <fstream>

#include "harness/corpus_store.h"
#include "nncheck/error.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

// A model whose nodes are `nodes`, each reading the previous one's output.
Model chain(std::vector<Node> nodes) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  std::string last = "x";
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    n.name = n.opType + "_" + std::to_string(i);
    n.inputs.insert(n.inputs.begin(), last);
    last = "v" + std::to_string(i);
    n.outputs = {last};
    m.graph.nodes.push_back(std::move(n));
  }
  ValueInfo out;
  out.name = last;
  out.dtype = DType::Float32;
  m.graph.outputs = {out};
  return m;
}

Node node(std::string op, std::vector<Attribute> attributes = {}) {
  Node n;
  n.opType = std::move(op);
  n.attributes = std::move(attributes);
  return n;
}

FailureInfo mismatchAt(const Model& m, size_t at, bool shape = false) {
  FailureInfo info;
  info.kind = Outcome::Mismatch;
  Divergence& d = info.divergence.emplace();
  d.node = at;
  d.name = m.graph.nodes[at].name;
  d.opType = m.graph.nodes[at].opType;
  d.layoutDiffers = shape;
  info.pattern = std::string(shape ? "mismatch in shape" : "mismatch") + " at " +
                 m.graph.nodes[at].opType + ": ...";
  return info;
}

TEST(FaultStage, EveryConfigurationFailingIsTheSharedStagesAndTheBaselineTellsTheRest) {
  const std::string shared = "the conversion";
  EXPECT_EQ(faultStage({{"ref", Outcome::Mismatch}, {"fast", Outcome::Crash}}, "ref", shared),
            "fails at every configuration: the fault is in what they share, the conversion");
  EXPECT_EQ(faultStage({{"ref", Outcome::Mismatch}, {"fast", Outcome::Mismatch}}, "ref", ""),
            "fails at every configuration: the fault is in what they share");
  EXPECT_EQ(faultStage({{"ref", Outcome::Pass}, {"fast", Outcome::Mismatch}}, "ref", shared),
            "passes at ref: a bug of the optimizing configurations");
  EXPECT_EQ(faultStage({{"ref", Outcome::Error}, {"fast", Outcome::Pass}}, "ref", shared),
            "fails at ref too: the engine's kernels or its adapter, not its optimizations");
  // A baseline that rejects the case tells nothing; nor does a triage without the baseline.
  EXPECT_EQ(faultStage({{"ref", Outcome::Unsupported}, {"fast", Outcome::Mismatch}}, "ref", shared),
            "");
  EXPECT_EQ(faultStage({{"fast", Outcome::Mismatch}}, "ref", shared), "");
}

TEST(RootCause, OneBugUnderManyConsumersIsOneRootCause) {
  // ReduceSum ignoring noop_with_empty_axes, seen through ReduceMax and ReduceProd: the first
  // diverging node is the ReduceSum either way.
  const Attribute noop = Attribute::ofInt("noop_with_empty_axes", 1);
  const Model max = chain({node("ReduceSum", {noop}), node("ReduceMax")});
  const Model prod = chain({node("ReduceSum", {noop}), node("ReduceProd")});
  EXPECT_EQ(rootCause(mismatchAt(max, 0), max), rootCause(mismatchAt(prod, 0), prod));
  EXPECT_EQ(rootCause(mismatchAt(max, 0), max), "mismatch at ReduceSum (noop_with_empty_axes)");
}

TEST(RootCause, AttributesAtTheirDefaultsDoNotCountAndOthersDo) {
  const Model plain = chain({node("ReduceSum")});
  const Model byDefault = chain({node("ReduceSum", {Attribute::ofInt("keepdims", 1)})});
  const Model noop = chain({node("ReduceSum", {Attribute::ofInt("noop_with_empty_axes", 1)})});
  EXPECT_EQ(rootCause(mismatchAt(plain, 0), plain), rootCause(mismatchAt(byDefault, 0), byDefault));
  EXPECT_NE(rootCause(mismatchAt(plain, 0), plain), rootCause(mismatchAt(noop, 0), noop));
}

TEST(RootCause, AWrongShapeIsAnotherRootCauseThanWrongValues) {
  const Model m = chain({node("Relu")});
  EXPECT_EQ(rootCause(mismatchAt(m, 0, true), m), "mismatch in shape at Relu");
  EXPECT_NE(rootCause(mismatchAt(m, 0, true), m), rootCause(mismatchAt(m, 0), m));
  // A record from before layout_differs says it in its pattern alone.
  FailureInfo old = mismatchAt(m, 0);
  old.pattern = "mismatch in shape at Relu: Relu(x)";
  EXPECT_EQ(rootCause(old, m), "mismatch in shape at Relu");
}

TEST(RootCause, AnErrorAfterAWrongValueIsThatValuesMismatch) {
  const Model m = chain({node("Transpose"), node("MatMul")});
  FailureInfo error = mismatchAt(m, 0, true);
  error.kind = Outcome::Error;
  EXPECT_EQ(rootCause(error, m), rootCause(mismatchAt(m, 0, true), m));
}

TEST(RootCause, ACrashIsNamedByItsSignalAndLastNode) {
  const Model m = chain({node("Div"), node("Gather")});
  FailureInfo crash;
  crash.kind = Outcome::Crash;
  crash.signal = 11;
  EXPECT_EQ(rootCause(crash, m), "crash (SIGSEGV) at Gather");
  crash.signal = 6;
  EXPECT_EQ(rootCause(crash, m), "crash (SIGABRT) at Gather");
}

TEST(RootCause, AnErrorOnOtherInputDTypesIsAnotherRootCause) {
  // TVM fails Pow on two integers ("power only applies to float") and on an integer base with a
  // float exponent (apache/tvm#15718): two reports.
  auto pow = [](DType exponent) {
    Model m;
    m.opsets = {{"", 17}};
    m.graph.inputs = {ValueInfo::tensor("a", DType::Int64, {2}),
                      ValueInfo::tensor("b", exponent, {2})};
    m.graph.nodes = {Node::make("Pow", {"a", "b"}, {"y"}, "Pow_0")};
    m.graph.outputs = {ValueInfo::tensor("y", DType::Int64, {2})};
    return m;
  };
  FailureInfo error;
  error.kind = Outcome::Error;
  EXPECT_EQ(rootCause(error, pow(DType::Int64)), "error at Pow on int64, int64");
  EXPECT_EQ(rootCause(error, pow(DType::Float32)), "error at Pow on int64, float32");
  // Wrong values are told apart by the op and its attributes alone.
  FailureInfo mismatch = mismatchAt(pow(DType::Float32), 0);
  EXPECT_EQ(rootCause(mismatch, pow(DType::Float32)), "mismatch at Pow");
}

TEST(RootCause, OptimizationsNamedFinelyAreTheBugWhateverOpOrKindShowsIt) {
  // EliminateDropout: wrong values under one reader, a wrong shape under another.
  const std::vector<std::string> needed = {"EliminateDropout", "Level1_RuleBasedTransformer"};
  const Model add = chain({node("Dropout"), node("Add")});
  const Model shrink = chain({node("Dropout"), node("Shrink")});
  FailureInfo a = mismatchAt(add, 1), b = mismatchAt(shrink, 1, true);
  a.culprit = Culprit{.needed = needed, .searched = 73};
  b.culprit = Culprit{.needed = needed, .searched = 73};
  EXPECT_EQ(rootCause(a, add), rootCause(b, shrink));
  EXPECT_EQ(rootCause(a, add),
            "fails with only EliminateDropout+Level1_RuleBasedTransformer enabled");
}

TEST(RootCause, ASwitchForEveryOptimizationTellsNoBugsApart) {
  // OpenCV's one `fusion` switch: the culprit is every optimization there is, so the op stays.
  const Model div = chain({node("MatMul"), node("Div")});
  const Model concat = chain({node("Concat", {Attribute::ofInt("axis", 1)})});
  FailureInfo a = mismatchAt(div, 1), b = mismatchAt(concat, 0);
  a.culprit = Culprit{.needed = {"fusion"}, .searched = 1};
  b.culprit = Culprit{.needed = {"fusion"}, .searched = 1};
  EXPECT_EQ(rootCause(a, div), "mismatch at Div, needs fusion");
  EXPECT_NE(rootCause(a, div), rootCause(b, concat));
  // And a record from before `searched` keeps its op too.
  a.culprit->searched = 0;
  EXPECT_EQ(rootCause(a, div), "mismatch at Div, needs fusion");
}

TEST(RootCause, AnotherOraclesFindingIsAnotherRootCause) {
  const Model m = chain({node("Relu")});
  FailureInfo equivalence = mismatchAt(m, 0);
  equivalence.oracle = "equivalence";
  EXPECT_EQ(rootCause(equivalence, m), "equivalence: mismatch at Relu");
}

TEST(RootCause, GroupsKeepTheOrderOfTheirFirstMember) {
  const auto groups = groupByRootCause({"b", "a", "b", "c", "a"});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].rootCause, "b");
  EXPECT_EQ(groups[0].members, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(groups[1].members, (std::vector<size_t>{1, 4}));
  EXPECT_EQ(groups[2].members, (std::vector<size_t>{3}));
}

class KnownBugsTest : public ::testing::Test {
 protected:
  // Saves a failure of `m` with `info` as a case of the corpus.
  fs::path save(const Model& m, FailureInfo info) {
    TestCase tc;
    tc.model = m;
    tc.inputs["x"] = Tensor(DType::Float32, {2, 3});
    info.property = "fuzz-test";
    return saveFailure(dir_.path(), "fuzz-test", tc, info);
  }
  testing::TempDir dir_{"known"};
};

TEST_F(KnownBugsTest, AFindingWithAKnownRootCauseIsThatBug) {
  const Attribute noop = Attribute::ofInt("noop_with_empty_axes", 1);
  const Model known = chain({node("ReduceSum", {noop}), node("ReduceMax")});
  FailureInfo info = mismatchAt(known, 0);
  info.title = "ReduceSum ignores noop_with_empty_axes";
  info.upstream = "none found";
  const fs::path saved = save(known, info);
  KnownBugs bugs;
  bugs.add(dir_.path());
  ASSERT_EQ(bugs.size(), 1u);
  // The same bug under another consumer is known, with what was written about it.
  const Model other = chain({node("ReduceSum", {noop}), node("ReduceL1")});
  const KnownBug* match = bugs.match(mismatchAt(other, 0), other);
  ASSERT_NE(match, nullptr);
  EXPECT_EQ(match->dir, saved);
  EXPECT_EQ(match->title, "ReduceSum ignores noop_with_empty_axes");
  EXPECT_EQ(match->upstream, "none found");
  // One pattern of ops and wiring with another attribute is another bug.
  const Model plain = chain({node("ReduceSum"), node("ReduceMax")});
  EXPECT_EQ(bugs.match(mismatchAt(plain, 0), plain), nullptr);
}

// What a campaign tries first in a culprit search: each known bug's optimizations, once.
TEST_F(KnownBugsTest, GiveTheOptimizationsEachKnownBugNeeds) {
  const Model m = chain({node("ReduceSum"), node("ReduceMax")});
  FailureInfo fused = mismatchAt(m, 0);
  fused.culprit = Culprit{.needed = {"FoldConstants", "FuseMulAdd"}, .searched = 8};
  save(m, fused);
  save(chain({node("ReduceSum"), node("ReduceL1")}), fused);
  save(chain({node("ReduceSum"), node("ReduceL2")}), mismatchAt(m, 0));  // no culprit
  KnownBugs bugs;
  bugs.add(dir_.path());
  EXPECT_EQ(bugs.size(), 3u);
  EXPECT_EQ(bugs.culprits(),
            (std::vector<std::vector<std::string>>{{"FoldConstants", "FuseMulAdd"}}));
}

TEST_F(KnownBugsTest, AFolderThatIsNoneOrACaseThatCannotBeReadIsAnErrorNamingIt) {
  KnownBugs bugs;
  try {
    bugs.add(dir_.path() / "missing");
    FAIL() << "a missing folder was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing: no such folder of known bugs"),
              std::string::npos)
        << e.what();
  }
  const Model m = chain({node("Relu")});
  const fs::path saved = save(m, mismatchAt(m, 0));
  std::ofstream(saved / "nncheck.json") << "{not json";
  try {
    bugs.add(dir_.path());
    FAIL() << "a broken case was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((saved / "nncheck.json").string()), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nncheck
