// Unrolled control flow: generated models with If, Loop and Scan compute the same outputs bit for
// bit once unrolled, the unrolled model stands alone, and gradients through it (through bodies,
// loop iterations, scan slices and captured values) agree with finite differences.
#include "interp/unroll.h"

#include <gtest/gtest.h>

#include <cmath>

#include "interp/gradients.h"
#include "nncheck/generator.h"
#include "nncheck/test_case.h"
#include "test_util.h"

namespace nncheck {
namespace {

bool hasSubgraphs(const Model& m) {
  for (const Node& n : m.graph.nodes)
    if (!n.subgraphs().empty()) return true;
  return false;
}

TEST(Unroll, GeneratedControlFlowComputesTheSameOutputsAndStandsAlone) {
  GeneratorConfig cfg;
  cfg.controlFlow = true;
  cfg.nodes = 12;
  int withBodies = 0;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    if (!hasSubgraphs(tc.model)) continue;
    ++withBodies;
    const Unrolled u = unrollControlFlow(tc.model, tc.inputs);
    EXPECT_FALSE(hasSubgraphs(u.model)) << "seed " << seed;
    const TensorMap expected = runReference(tc.model, tc.inputs);
    ASSERT_EQ(u.model.graph.outputs.size(), tc.model.graph.outputs.size());
    for (size_t o = 0; o < tc.model.graph.outputs.size(); ++o)
      EXPECT_EQ(u.values.at(u.model.graph.outputs[o].name),
                expected.at(tc.model.graph.outputs[o].name))
          << "seed " << seed << ", output " << tc.model.graph.outputs[o].name;
    // Every value it reports is what its own model computes.
    const TensorMap again = runReferenceAllValues(u.model, tc.inputs);
    for (const auto& [name, t] : u.values)
      EXPECT_EQ(again.at(name), t) << "seed " << seed << ", " << name;
  }
  EXPECT_GE(withBodies, 10);
}

using testing::f32;

// x, w [2] -> If(true: t = x * w) -> Loop 3 times (s = Sin(s) * w, scanned) -> Scan over the
// 3 x 2 scan output, reversed (acc = acc + Tanh(row), each acc scanned). w is captured by the
// branch and the Loop body; the Scan's body reads only its inputs.
TestCase nestedFlow() {
  Graph thenG;
  thenG.name = "then";
  thenG.nodes = {Node::make("Mul", {"x", "w"}, {"t"})};
  thenG.outputs = {f32("t", {2})};
  Graph elseG;
  elseG.name = "else";
  elseG.nodes = {Node::make("Add", {"x", "w"}, {"t2"})};
  elseG.outputs = {f32("t2", {2})};
  Graph loopBody;
  loopBody.name = "loop_body";
  loopBody.inputs = {ValueInfo::tensor("i", DType::Int64, {}),
                     ValueInfo::tensor("c", DType::Bool, {}), f32("s", {2})};
  loopBody.nodes = {Node::make("Sin", {"s"}, {"sin_s"}), Node::make("Mul", {"sin_s", "w"}, {"s2"}),
                    Node::make("Identity", {"c"}, {"c2"})};
  loopBody.outputs = {ValueInfo::tensor("c2", DType::Bool, {}), f32("s2", {2}), f32("s2", {2})};
  Graph scanBody;
  scanBody.name = "scan_body";
  scanBody.inputs = {f32("acc", {2}), f32("row", {2})};
  scanBody.nodes = {Node::make("Tanh", {"row"}, {"th"}),
                    Node::make("Add", {"acc", "th"}, {"acc2"})};
  scanBody.outputs = {f32("acc2", {2}), f32("acc2", {2})};

  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 16}};
  m.graph.inputs = {f32("x", {2}), f32("w", {2}), f32("acc0", {2})};
  m.graph.initializers = {{"cond", Tensor::scalar<bool>(true), ""},
                          {"M", Tensor::scalar<int64_t>(3), ""}};
  Node iff = Node::make("If", {"cond"}, {"t_out"}, "if");
  iff.attributes = {Attribute::ofGraph("then_branch", thenG),
                    Attribute::ofGraph("else_branch", elseG)};
  Node loop = Node::make("Loop", {"M", "", "t_out"}, {"s_final", "s_all"}, "loop");
  loop.attributes = {Attribute::ofGraph("body", loopBody)};
  Node scan = Node::make("Scan", {"acc0", "s_all"}, {"acc_final", "accs"}, "scan");
  scan.attributes = {Attribute::ofGraph("body", scanBody), Attribute::ofInt("num_scan_inputs", 1),
                     Attribute::ofInts("scan_input_directions", {1})};
  m.graph.nodes = {iff, loop, scan};
  m.graph.outputs = {f32("s_final", {2}), f32("acc_final", {2}), f32("accs", {3, 2})};
  tc.inputs = {{"x", Tensor::fromVector<float>({2}, {0.7f, -1.3f})},
               {"w", Tensor::fromVector<float>({2}, {1.1f, 0.6f})},
               {"acc0", Tensor::fromVector<float>({2}, {0.2f, -0.4f})}};
  return tc;
}

// The sum of every output element.
double loss(const TestCase& tc) {
  double l = 0;
  for (const auto& [name, t] : runReference(tc.model, tc.inputs))
    for (int64_t i = 0; i < t.size(); ++i) l += t.toDouble(i);
  return l;
}

TEST(Unroll, GradientsThroughIfLoopAndScanAgreeWithFiniteDifferences) {
  const TestCase tc = nestedFlow();
  const Unrolled u = unrollControlFlow(tc.model, tc.inputs);
  Gradients seeds;
  for (const ValueInfo& o : u.model.graph.outputs)
    seeds[o.name].assign(static_cast<size_t>(u.values.at(o.name).size()), 1.0);
  const Gradients g = backpropagate(u.model, u.values, seeds);
  for (const std::string name : {"x", "w", "acc0"}) {
    ASSERT_TRUE(g.count(name)) << "no gradient reaches " << name;
    for (int64_t i = 0; i < 2; ++i) {
      const double h = 1e-2;
      TestCase up = tc, down = tc;
      up.inputs.at(name).span<float>()[static_cast<size_t>(i)] += static_cast<float>(h);
      down.inputs.at(name).span<float>()[static_cast<size_t>(i)] -= static_cast<float>(h);
      const double fd = (loss(up) - loss(down)) / (2 * h);
      EXPECT_NEAR(g.at(name)[static_cast<size_t>(i)], fd, 1e-2 * std::max(1.0, std::fabs(fd)))
          << name << "[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace nncheck
