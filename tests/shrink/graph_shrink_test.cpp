#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "doubles.h"
#include "nncheck/compare.h"
#include "nncheck/gen.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/shrink.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"
#include "nncheck/variants.h"

namespace nncheck {
namespace {

GeneratorConfig smallConfig(int nodes) {
  GeneratorConfig cfg;
  cfg.nodes = nodes;
  cfg.maxDim = 5;
  return cfg;
}

// Every candidate is valid, strictly smaller or simpler, and a cut keeps the values of the
// nodes it keeps (they are fed the cut values).
RC_GTEST_PROP(ShrinkCandidates, AreValidAndKeepDownstreamValues, ()) {
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  TestCase tc = makeTestCase(smallConfig(*rc::gen::inRange(2, 12)), seed);
  const TensorMap before = runReferenceAllValues(tc.model, tc.inputs);
  ShrinkCandidates c(tc);
  for (size_t i = 0; i < c.size(); ++i) {
    auto s = c.make(i);
    if (!s) continue;
    RC_ASSERT(!whyInvalid(s->model));
    RC_ASSERT(s->model.graph.nodes.size() <= tc.model.graph.nodes.size());
    if (c.describe(i).rfind("cut", 0) != 0) continue;
    RC_ASSERT(s->model.graph.nodes.size() < tc.model.graph.nodes.size());
    const TensorMap after = runReferenceAllValues(s->model, s->inputs);
    for (const Node& n : s->model.graph.nodes)
      for (const auto& o : n.outputs)
        RC_ASSERT(compareTensors(after.at(o), before.at(o), {0, 0}).ok);
  }
}

// A node alone is one valid node computing what it computed in the case, from what it read there
// (fed in), its outputs the graph's.
RC_GTEST_PROP(ShrinkCandidates, ANodeAloneComputesWhatItDidInTheCase, ()) {
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  TestCase tc = makeTestCase(smallConfig(*rc::gen::inRange(1, 10)), seed);
  const TensorMap before = runReferenceAllValues(tc.model, tc.inputs);
  ShrinkCandidates c(tc);
  int made = 0;
  for (size_t i = 0; i < tc.model.graph.nodes.size(); ++i) {
    const std::optional<TestCase> alone = c.alone(i);
    if (!alone) continue;
    ++made;
    RC_ASSERT(!whyInvalid(alone->model));
    RC_ASSERT(alone->model.graph.nodes.size() == 1u);
    const Node& n = alone->model.graph.nodes.front();
    RC_ASSERT(n.name == tc.model.graph.nodes[i].name);
    const TensorMap after = runReferenceAllValues(alone->model, alone->inputs);
    for (const ValueInfo& o : alone->model.graph.outputs)
      RC_ASSERT(compareTensors(after.at(o.name), before.at(o.name), {0, 0}).ok);
  }
  RC_ASSERT(made > 0);
  RC_ASSERT(!c.alone(tc.model.graph.nodes.size()));
}

TEST(ShrinkCandidates, OfferBigCutsFirstAndDescribeThemselves) {
  TestCase tc = makeTestCase(smallConfig(8), 5);
  ShrinkCandidates c(tc);
  ASSERT_GT(c.size(), 8u);
  EXPECT_EQ(c.describe(0).rfind("cut 4 node(s)", 0), 0u) << c.describe(0);
}

// A case free of NaN/Inf only shrinks to cases free of them: Log's input is never zeroed, and
// every candidate passes value search's checks.
// A case's equivalence rewrites shrink with it: each can be dropped first, and an edit that takes
// a rewrite's value away (or its precondition) takes the rewrite too.
TEST(ShrinkCandidates, DropRewritesFirstAndThoseWhoseValueIsCut) {
  GeneratorConfig cfg = smallConfig(8);
  cfg.rewrites = 3;
  TestCase tc;
  for (uint64_t seed = 1; tc.rewrites.size() < 2; ++seed) {
    ASSERT_LT(seed, 50u) << "no case with two rewrites";
    tc = makeTestCase(cfg, seed);
  }
  ShrinkCandidates c(tc);
  for (size_t r = 0; r < tc.rewrites.size(); ++r) {
    EXPECT_EQ(c.describe(r).rfind("drop rewrite ", 0), 0u) << c.describe(r);
    const auto fewer = c.make(r);
    ASSERT_TRUE(fewer);
    EXPECT_EQ(fewer->rewrites.size(), tc.rewrites.size() - 1);
    EXPECT_EQ(fewer->model, tc.model);
  }
  for (size_t i = tc.rewrites.size(); i < c.size(); ++i) {
    const auto s = c.make(i);
    if (!s) continue;
    std::vector<Rewrite> applied;
    applyRewrites(s->model, s->rewrites, &applied);
    EXPECT_EQ(applied, s->rewrites) << c.describe(i);
  }
}

TEST(ShrinkCandidates, KeepValuesInsideTheirDomains) {
  GeneratorConfig cfg;
  cfg.nodes = 8;
  cfg.dtypes = {DType::Float32};
  cfg.opWeights = {{"Log", 6}, {"Sqrt", 6}, {"Asin", 6}};
  int candidates = 0;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    ShrinkCandidates shrinks(makeTestCase(cfg, seed));
    for (size_t i = 0; i < shrinks.size(); ++i) {
      std::optional<TestCase> c = shrinks.make(i);
      if (!c) continue;
      ++candidates;
      EXPECT_TRUE(searchValues(*c, {.maxSteps = 0, .restarts = 0}).finite)
          << shrinks.describe(i) << "\n"
          << modelToText(c->model);
    }
  }
  EXPECT_GT(candidates, 0);
}

// Inlining the branch an If takes, or the body of a Loop that runs once or of a Scan over one
// slice, keeps every output's value exactly; every inline candidate is a valid case.
TEST(ShrinkCandidates, InlinedTakenBranchesAndOneStepBodiesComputeWhatTheNodeDid) {
  GeneratorConfig cfg = smallConfig(12);
  cfg.controlFlow = true;
  int exact = 0;
  std::set<std::string> ops;
  for (uint64_t seed = 0; seed < 120; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    const TensorMap before = runReferenceAllValues(tc.model, tc.inputs);
    ShrinkCandidates c(tc);
    std::map<std::string, std::string> keeping;  // edits that must keep the values, by op
    for (size_t n = 0; n < tc.model.graph.nodes.size(); ++n) {
      const Node& node = tc.model.graph.nodes[n];
      if (node.opType == "If")
        keeping["inline " +
                std::string(before.at(node.inputs[0]).toInt64(0) ? "then_branch" : "else_branch") +
                " of " + node.label(n)] = "If";
      if (node.opType == "Loop" && before.at(node.inputs[0]).toInt64(0) == 1)
        keeping["inline body of " + node.label(n)] = "Loop";
      if (node.opType == "Scan") keeping["inline body of " + node.label(n)] = "Scan";
    }
    for (size_t i = 0; i < c.size(); ++i) {
      if (c.describe(i).rfind("inline", 0) != 0) continue;
      const std::optional<TestCase> s = c.make(i);
      if (!s) continue;
      EXPECT_FALSE(whyInvalid(s->model)) << c.describe(i);
      if (!keeping.count(c.describe(i))) continue;
      const TensorMap after = runReference(s->model, s->inputs);
      for (const ValueInfo& o : s->model.graph.outputs)
        EXPECT_TRUE(compareTensors(after.at(o.name), before.at(o.name), {0, 0}).ok)
            << "seed " << seed << ", " << c.describe(i) << ": output " << o.name;
      ++exact;
      ops.insert(keeping[c.describe(i)]);
    }
  }
  EXPECT_GE(exact, 5);
  EXPECT_EQ(ops, (std::set<std::string>{"If", "Loop", "Scan"}));
}

int bodyNodes(const Model& m) {
  int n = 0;
  for (const Node& node : m.graph.nodes)
    for (const Graph* body : node.subgraphs()) n += static_cast<int>(body->nodes.size());
  return n;
}

// Shrinking reaches into bodies: a body's node bypassed leaves a valid case with fewer nodes in
// bodies, and the nodes no body output needs any more go with it.
TEST(ShrinkCandidates, BypassesNodesInsideBodies) {
  GeneratorConfig cfg = smallConfig(12);
  cfg.controlFlow = true;
  int made = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    ShrinkCandidates c(tc);
    for (size_t i = 0; i < c.size(); ++i) {
      if (c.describe(i).find(" in ") == std::string::npos || c.describe(i).rfind("bypass", 0) != 0)
        continue;
      const std::optional<TestCase> s = c.make(i);
      if (!s) continue;
      ++made;
      EXPECT_EQ(whyInvalid(s->model), std::nullopt) << c.describe(i);
      EXPECT_LT(bodyNodes(s->model), bodyNodes(tc.model))
          << "seed " << seed << ", " << c.describe(i);
      EXPECT_NO_THROW(runReference(s->model, s->inputs)) << c.describe(i);
    }
  }
  EXPECT_GE(made, 10);
}

TEST(ShrinkCandidates, PruningDropsWhatNoOutputNeeds) {
  TestCase tc = makeTestCase(smallConfig(10), 11);
  tc.model.graph.outputs.resize(1);
  pruneDeadNodes(tc);
  EXPECT_LT(tc.model.graph.nodes.size(), 10u);
  EXPECT_EQ(whyInvalid(tc.model), std::nullopt);
  EXPECT_NO_THROW(runReference(tc.model, tc.inputs));
}

using testing::MatMulReluOddInner;

struct Shrunk {
  bool failed = false;
  TestCase last;  // the last failing case: the shrunk one
  int runs = 0;
};

Shrunk checkAgainstReference(Backend& engine, GeneratorConfig cfg, uint64_t rcSeed) {
  Shrunk out;
  auto property = [&](const TestCase& tc) {
    ++out.runs;
    TensorMap want = runReference(tc.model, tc.inputs);
    TensorMap got = engine.run(tc.model, tc.inputs);
    bool same = true;
    for (const auto& [name, w] : want) same = same && compareTensors(got.at(name), w).ok;
    if (!same) out.last = tc;
    RC_ASSERT(same);
  };
  rc::detail::TestParams params;
  params.seed = rcSeed;
  params.maxSuccess = 200;
  auto gen = gen::testCase(cfg);
  auto result =
      rc::detail::checkTestable([&] { property(*gen); }, rc::detail::TestMetadata{}, params);
  out.failed = result.is<rc::detail::FailureResult>();
  return out;
}

TEST(Shrinking, MatMulReluBugShrinksToItsTwoNodePattern) {
  GeneratorConfig cfg;
  cfg.nodes = 30;
  cfg.dtypes = {DType::Float32};
  cfg.ops = {"MatMul", "Relu", "Add", "Sigmoid", "Tanh", "Transpose", "Concat", "Mul"};
  cfg.opWeights = {{"MatMul", 3}, {"Relu", 3}};
  MatMulReluOddInner engine;
  Shrunk s = checkAgainstReference(engine, cfg, 1);
  ASSERT_TRUE(s.failed) << "the buggy engine was never caught";
  const auto& nodes = s.last.model.graph.nodes;
  ASSERT_EQ(nodes.size(), 2u) << modelToText(s.last.model);
  EXPECT_EQ(nodes[0].opType, "MatMul");
  EXPECT_EQ(nodes[1].opType, "Relu");
  std::cout << "shrunk in " << s.runs << " property runs:\n" << modelToText(s.last.model);
}

// x @ w -> Relu, then Add(MatMul's, Relu's): cutting the Add keeps the MatMul's value internal,
// as it was, so the fusion that needs it internal still fails and the pair is what remains.
TEST(Shrinking, CuttingATailKeepsAFeederItsKeptReadersStillRead) {
  TestCase tc = testing::matMulRelu(false);
  tc.model.graph.nodes.push_back(Node::make("Add", {"p", "r"}, {"y"}, "add"));
  tc.model.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 1})};
  testing::FusedMatMulRelu engine;
  auto fails = [&](const TestCase& c) {
    const TensorMap got = engine.run(c.model, c.inputs);
    for (const auto& [name, want] : runReference(c.model, c.inputs))
      if (!compareTensors(got.at(name), want).ok) return true;
    return false;
  };
  ASSERT_TRUE(fails(tc));
  const ShrinkResult r = shrinkGreedily(tc, fails);
  ASSERT_EQ(r.testCase.model.graph.nodes.size(), 2u) << modelToText(r.testCase.model);
  EXPECT_EQ(r.testCase.model.graph.nodes[1].opType, "Relu");
}

TEST(Shrinking, TheCorrectEngineNeverFails) {
  GeneratorConfig cfg;
  cfg.nodes = 12;
  Shrunk s = checkAgainstReference(reference(), cfg, 2);
  EXPECT_FALSE(s.failed) << modelToText(s.last.model);
  EXPECT_EQ(s.runs, 200);
}

// Dims shrink to the smallest that keep the failure: 2 where the bug needs "more than one",
// 1 elsewhere, jointly across operands a rule ties together.
Shape shapeOf(const TestCase& tc, const std::string& name) {
  if (auto it = tc.inputs.find(name); it != tc.inputs.end()) return it->second.shape();
  return tc.model.graph.initializer(name)->value.shape();
}

TestCase fromNodes(std::vector<std::pair<std::string, Shape>> inputs, std::vector<Node> nodes,
                   std::vector<std::pair<std::string, Shape>> outputs) {
  TestCase tc;
  tc.model.opsets = {{"", 14}};
  tc.model.graph.name = "g";
  tc.seed = 5;
  uint64_t k = 0;
  for (const auto& [name, shape] : inputs) {
    tc.model.graph.inputs.push_back(ValueInfo::tensor(name, DType::Float32, shape));
    Tensor t(DType::Float32, shape);
    for (float& v : t.span<float>()) v = static_cast<float>(++k % 7) / 7.0f - 0.4f;
    tc.inputs[name] = t;
  }
  tc.model.graph.nodes = std::move(nodes);
  for (const auto& [name, shape] : outputs)
    tc.model.graph.outputs.push_back(ValueInfo::tensor(name, DType::Float32, shape));
  checkValid(tc.model);
  return tc;
}

TEST(Shrinking, DimsGoToTwoWhereTheFailureNeedsMoreThanOne) {
  // Fails while every dim of the transposed value is at least 2 (a bug in a tiled kernel, say).
  Node transpose = Node::make("Transpose", {"x"}, {"y"}, "t");
  transpose.attributes = {Attribute::ofInts("perm", {1, 0, 2})};
  TestCase tc = fromNodes({{"x", {7, 8, 7}}}, {transpose}, {{"y", {8, 7, 7}}});
  auto fails = [](const TestCase& c) {
    for (const Node& n : c.model.graph.nodes)
      if (n.opType == "Transpose") {
        const Shape s = shapeOf(c, n.inputs[0]);
        return std::all_of(s.begin(), s.end(), [](int64_t d) { return d >= 2; });
      }
    return false;
  };
  ShrinkResult r = shrinkGreedily(tc, fails);
  EXPECT_EQ(shapeOf(r.testCase, "x"), (Shape{2, 2, 2})) << modelToText(r.testCase.model);
}

// A failure at one node of a chain: shrinking from that node alone (its focus) ends at it in
// fewer runs than cutting toward it; a focus whose node alone passes costs one run, no more.
TEST(Shrinking, StartsFromTheFailingNodeAloneWhenItsFocusIsGiven) {
  TestCase tc = fromNodes(
      {{"x", {2, 3}}},
      {Node::make("Relu", {"x"}, {"a"}, "relu"), Node::make("Sigmoid", {"a"}, {"b"}, "sigmoid"),
       Node::make("Tanh", {"b"}, {"c"}, "tanh"), Node::make("Abs", {"c"}, {"d"}, "abs"),
       Node::make("Neg", {"d"}, {"y"}, "neg")},
      {{"y", {2, 3}}});
  auto fails = [](const TestCase& c) {
    const auto& nodes = c.model.graph.nodes;
    return std::any_of(nodes.begin(), nodes.end(),
                       [](const Node& n) { return n.opType == "Tanh"; });
  };
  const ShrinkResult cut = shrinkGreedily(tc, fails);
  const ShrinkResult focused = shrinkGreedily(tc, fails, {}, 2);
  ASSERT_EQ(focused.testCase.model.graph.nodes.size(), 1u) << modelToText(focused.testCase.model);
  EXPECT_EQ(focused.testCase.model.graph.nodes[0].opType, "Tanh");
  EXPECT_EQ(modelToText(focused.testCase.model), modelToText(cut.testCase.model));
  EXPECT_LT(focused.steps, cut.steps);
  const ShrinkResult missed = shrinkGreedily(tc, fails, {}, 0);  // Relu alone passes
  EXPECT_EQ(modelToText(missed.testCase.model), modelToText(cut.testCase.model));
  EXPECT_EQ(missed.steps, cut.steps + 1);
}

TEST(Shrinking, OperandsARuleTiesShrinkTogether) {
  // (x . w) + b with x [3, 6], w [6], b [3]: fails while the product has two or more rows. The
  // inner dim is free to go to 1 only if x and w shrink it together.
  TestCase tc = fromNodes(
      {{"x", {3, 6}}, {"w", {6}}, {"b", {3}}},
      {Node::make("MatMul", {"x", "w"}, {"p"}, "mm"), Node::make("Add", {"p", "b"}, {"y"}, "add")},
      {{"y", {3}}});
  auto fails = [](const TestCase& c) {
    const auto& nodes = c.model.graph.nodes;
    return nodes.size() == 2 && nodes[0].opType == "MatMul" && nodes[1].opType == "Add" &&
           shapeOf(c, nodes[0].inputs[0])[0] >= 2;
  };

  ShrinkResult r = shrinkGreedily(tc, fails);
  ASSERT_EQ(r.testCase.model.graph.nodes.size(), 2u) << modelToText(r.testCase.model);
  EXPECT_EQ(shapeOf(r.testCase, "x"), (Shape{2, 1})) << modelToText(r.testCase.model);
  EXPECT_EQ(shapeOf(r.testCase, "w"), (Shape{1})) << modelToText(r.testCase.model);
  EXPECT_EQ(shapeOf(r.testCase, "b"), (Shape{1})) << modelToText(r.testCase.model);  // broadcast
}

TEST(Shrinking, RankGoesToTheSmallestThatKeepsTheFailure) {
  // Fails while a Transpose works on three axes or more; perm names every axis, so dropping one
  // renumbers it.
  Node transpose = Node::make("Transpose", {"x"}, {"y"}, "t");
  transpose.attributes = {Attribute::ofInts("perm", {3, 1, 2, 0})};
  Node relu = Node::make("Relu", {"y"}, {"z"}, "r");
  TestCase tc = fromNodes({{"x", {7, 8, 7, 8}}}, {transpose, relu}, {{"z", {8, 8, 7, 7}}});
  auto fails = [](const TestCase& c) {
    for (const Node& n : c.model.graph.nodes)
      if (n.opType == "Transpose") return shapeOf(c, n.inputs[0]).size() >= 3;
    return false;
  };
  ShrinkResult r = shrinkGreedily(tc, fails);
  EXPECT_EQ(shapeOf(r.testCase, "x"), (Shape{1, 1, 1})) << modelToText(r.testCase.model);
  checkValid(r.testCase.model);
}

TEST(Shrinking, AFailureAtTheEndOfATensorShrinksToThatElement) {
  // x * w fails only where 100 meets -100, at [7, 1] of [8, 5] (INT64_MIN / -1 in a real
  // finding): cutting the rows keeps the last one, and the case reaches one element.
  TestCase tc = fromNodes({{"x", {8, 5}}, {"w", {8, 5}}},
                          {Node::make("Mul", {"x", "w"}, {"y"}, "mul")}, {{"y", {8, 5}}});
  tc.inputs.at("x").span<float>()[7 * 5 + 1] = 100;
  tc.inputs.at("w").span<float>()[7 * 5 + 1] = -100;
  auto fails = [](const TestCase& c) {
    const TensorMap out = runReference(c.model, c.inputs);
    const Tensor& y = out.begin()->second;
    for (int64_t i = 0; i < y.size(); ++i)
      if (y.toDouble(i) == -10000) return true;
    return false;
  };
  ShrinkResult r = shrinkGreedily(tc, fails);
  EXPECT_EQ(elementCount(shapeOf(r.testCase, "x")), 1) << modelToText(r.testCase.model);
  EXPECT_EQ(elementCount(shapeOf(r.testCase, "w")), 1) << modelToText(r.testCase.model);
}

TEST(Shrinking, DroppingAnAxisTakesTheOperandsThatShareIt) {
  // x [1, 3] + w [1, 3]: dropping the first axis of x drops the first of w too, and the sum's.
  TestCase tc = fromNodes({{"x", {1, 3}}, {"w", {1, 3}}},
                          {Node::make("Add", {"x", "w"}, {"y"}, "add")}, {{"y", {1, 3}}});
  std::optional<TestCase> lower;
  ShrinkCandidates c(tc);
  for (size_t i = 0; i < c.size() && !lower; ++i)
    if (c.describe(i) == "drop axis 0 of x") lower = c.make(i);
  ASSERT_TRUE(lower);
  EXPECT_EQ(shapeOf(*lower, "x"), (Shape{3}));
  EXPECT_EQ(shapeOf(*lower, "w"), (Shape{3}));
  EXPECT_EQ(lower->model.graph.outputs[0].shape(), (Shape{3}));
}

}  // namespace
}  // namespace nncheck
