// Mutations that keep a case's nodes: numbers re-solved over every rule at once, aimed at the
// parameter conditions rewrites test (a square MatMul, a shape operand's zeros), and one
// attribute drawn again. Every mutant is valid, finite and deterministic in its seed.
#include "generators/mutations.h"

#include <gtest/gtest.h>

#include "generators/op_table.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"

namespace nncheck {
namespace {

Tensor filled(const Shape& shape, float v) {
  Tensor t(DType::Float32, shape);
  for (float& x : t.span<float>()) x = v;
  return t;
}

// MatMul(x[2, 3], w[3, 4]) + b[4]: a MatMul, never square, feeding an Add.
TestCase matMulAdd() {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.initializers = {{"w", filled({3, 4}, 0.5f), ""}, {"b", filled({4}, 0.25f), ""}};
  m.graph.nodes = {Node::make("MatMul", {"x", "w"}, {"mm"}, "n0"),
                   Node::make("Add", {"mm", "b"}, {"y"}, "n1")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 4})};
  tc.inputs["x"] = filled({2, 3}, 0.1f);
  return tc;
}

// Pad(x[2, 2, 4, 4], pads all 1, mode constant) then Relu: padding on every axis.
TestCase padRelu() {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 2, 4, 4})};
  m.graph.initializers = {{"pads", Tensor::fromVector<int64_t>({8}, {1, 1, 1, 1, 1, 1, 1, 1}), ""}};
  Node pad = Node::make("Pad", {"x", "pads"}, {"p"}, "n0");
  pad.attributes.push_back(Attribute::ofString("mode", "constant"));
  m.graph.nodes = {pad, Node::make("Relu", {"p"}, {"y"}, "n1")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {4, 4, 6, 6})};
  tc.inputs["x"] = filled({2, 2, 4, 4}, 0.3f);
  return tc;
}

void expectValidAndFinite(const TestCase& tc, uint64_t seed) {
  if (auto why = whyInvalid(tc.model)) FAIL() << "seed " << seed << ": " << *why;
  TestCase copy = tc;
  EXPECT_TRUE(searchValues(copy, {.maxSteps = 0, .restarts = 0}).finite) << "seed " << seed;
}

TEST(ResolveNumbers, MakesAMatMulSquareAndKeepsEveryNode) {
  const GeneratorConfig cfg;
  const TestCase parent = matMulAdd();
  int mutants = 0, square = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Rng rng(seed);
    const std::optional<TestCase> m = gen::resolveNumbers(cfg, parent, rng);
    if (!m) continue;
    ++mutants;
    expectValidAndFinite(*m, seed);
    ASSERT_EQ(m->model.graph.nodes.size(), 2u);
    EXPECT_EQ(m->model.graph.nodes[1].inputs[0], "mm");  // the wiring stays
    EXPECT_NE(serializeModel(m->model), serializeModel(parent.model)) << "seed " << seed;
    const Tensor mm = runReferenceAllValues(m->model, m->inputs).at("mm");
    square += mm.shape()[0] == mm.shape()[1];
    Rng again(seed);
    EXPECT_EQ(serializeModel(gen::resolveNumbers(cfg, parent, again)->model),
              serializeModel(m->model));
  }
  EXPECT_GT(mutants, 30);
  EXPECT_GT(square, 3);
}

TEST(ResolveNumbers, SetsEntriesOfAShapeOperandToZero) {
  const GeneratorConfig cfg;
  const TestCase parent = padRelu();
  int noBatchOrChannelPadding = 0;
  for (uint64_t seed = 0; seed < 80; ++seed) {
    Rng rng(seed);
    const std::optional<TestCase> m = gen::resolveNumbers(cfg, parent, rng);
    if (!m) continue;
    expectValidAndFinite(*m, seed);
    const std::vector<int64_t> pads = m->model.graph.initializer("pads")->value.toInt64s();
    noBatchOrChannelPadding += pads[0] == 0 && pads[1] == 0 && pads[4] == 0 && pads[5] == 0;
  }
  EXPECT_GT(noBatchOrChannelPadding, 0);
}

TEST(RedrawAttribute, ChangesOneAttributeInPlaceAndKeepsTheCaseValid) {
  const GeneratorConfig cfg;
  const auto table = gen::buildOpTable(cfg);
  const TestCase parent = padRelu();
  std::set<std::string> modes;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Rng rng(seed);
    const std::optional<TestCase> m = gen::redrawAttribute(cfg, table, parent, rng);
    if (!m) continue;
    expectValidAndFinite(*m, seed);
    EXPECT_EQ(m->model.graph.nodes.size(), 2u);
    EXPECT_NE(serializeModel(m->model), serializeModel(parent.model)) << "seed " << seed;
    const Attribute* mode = m->model.graph.nodes[0].attribute("mode");
    modes.insert(mode ? mode->s : "(default)");
  }
  EXPECT_TRUE(modes.count("reflect") || modes.count("edge"));
  EXPECT_TRUE(modes.count("(default)"));
}

}  // namespace
}  // namespace nncheck
