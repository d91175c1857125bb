// If, Loop and Scan beyond ONNX 1.12's node tests: values captured from enclosing graphs (two
// levels up), early exit, reverse scans along other axes, branches of different shapes, nested
// graphs through ONNX I/O and the text printer, and body outputs that break their declared types.
#include <gtest/gtest.h>

#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/test_case.h"
#include "nncheck/validity.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::f32;

Tensor floats(const Shape& s, std::vector<float> v) { return Tensor::fromVector<float>(s, v); }

// A Loop body that adds `addend` (captured from outside) to its carried value, stops once the
// iteration number reaches `stopAt` (captured too), and scans the running sum.
Graph accumulatingBody() {
  Graph b;
  b.name = "acc";
  b.inputs = {ValueInfo::tensor("i", DType::Int64, {}), ValueInfo::tensor("c", DType::Bool, {}),
              f32("s", {2})};
  b.nodes = {Node::make("Add", {"s", "addend"}, {"s_next"}),
             Node::make("Less", {"i", "stopAt"}, {"go_on"})};
  b.outputs = {ValueInfo::tensor("go_on", DType::Bool, {}), f32("s_next", {2}), f32("s_next", {2})};
  return b;
}

Model loopModel(int64_t trips) {
  Model m;
  m.opsets = {{"", 16}};
  Graph& g = m.graph;
  g.name = "loop_model";
  g.inputs = {f32("x", {2}), f32("addend", {2})};
  g.initializers = {{"M", Tensor::scalar<int64_t>(trips), ""},
                    {"stopAt", Tensor::scalar<int64_t>(2), ""}};
  Node loop = Node::make("Loop", {"M", "", "x"}, {"final", "sums"}, "loop");
  loop.attributes = {Attribute::ofGraph("body", accumulatingBody())};
  g.nodes = {loop};
  g.outputs = {f32("final", {2}), f32("sums", {trips, 2})};
  return m;
}

TEST(ControlFlow, LoopCarriesCapturedValuesAndScansEachIteration) {
  const TensorMap out =
      runReference(loopModel(2), {{"x", floats({2}, {1, 2})}, {"addend", floats({2}, {10, 20})}});
  EXPECT_EQ(out.at("final"), floats({2}, {21, 42}));
  EXPECT_EQ(out.at("sums"), floats({2, 2}, {11, 22, 21, 42}));
}

TEST(ControlFlow, LoopStopsWhenTheBodysConditionTurnsFalse) {
  // M = 5, but the body's condition i < 2 is false at i = 2: three iterations run.
  const TensorMap out =
      runReference(loopModel(5), {{"x", floats({2}, {0, 0})}, {"addend", floats({2}, {1, 1})}});
  EXPECT_EQ(out.at("final"), floats({2}, {3, 3}));
  EXPECT_EQ(out.at("sums").shape(), (Shape{3, 2}));
}

TEST(ControlFlow, ScanRunsReversedAlongAnyAxisAndStacksOutputsWhereAsked) {
  // State: a running sum over the columns of x (2 x 3), scanned along axis 1 from the last
  // column; each step's state is stacked along output axis 1, also reversed.
  Graph body;
  body.name = "cols";
  body.inputs = {f32("acc", {2}), f32("col", {2})};
  body.nodes = {Node::make("Add", {"acc", "col"}, {"acc_next"})};
  body.outputs = {f32("acc_next", {2}), f32("acc_next", {2})};
  Model m;
  m.opsets = {{"", 16}};
  m.graph.inputs = {f32("init", {2}), f32("x", {2, 3})};
  Node scan = Node::make("Scan", {"init", "x"}, {"total", "partial"}, "scan");
  scan.attributes = {Attribute::ofGraph("body", body),
                     Attribute::ofInt("num_scan_inputs", 1),
                     Attribute::ofInts("scan_input_axes", {1}),
                     Attribute::ofInts("scan_input_directions", {1}),
                     Attribute::ofInts("scan_output_axes", {-1}),
                     Attribute::ofInts("scan_output_directions", {1})};
  m.graph.nodes = {scan};
  m.graph.outputs = {f32("total", {2}), f32("partial", {2, 3})};
  const TensorMap out = runReference(
      m, {{"init", floats({2}, {0, 0})}, {"x", floats({2, 3}, {1, 2, 3, 10, 20, 30})}});
  EXPECT_EQ(out.at("total"), floats({2}, {6, 60}));
  // Steps see columns 2, 1, 0: sums 3, 5, 6 (and 30, 50, 60); reversed output puts step t at
  // position 2 - t.
  EXPECT_EQ(out.at("partial"), floats({2, 3}, {6, 5, 3, 60, 50, 30}));
}

// If whose then-branch runs a Loop (nested two deep) that captures the top graph's `addend`,
// and whose else-branch gives a value of another shape.
Model nestedIfModel() {
  Graph thenG;
  thenG.name = "then";
  Node loop = Node::make("Loop", {"M", "", "x"}, {"final", "sums"}, "inner_loop");
  loop.attributes = {Attribute::ofGraph("body", accumulatingBody())};
  thenG.nodes = {loop};
  thenG.outputs = {f32("final", {2})};
  Graph elseG;
  elseG.name = "else";
  elseG.nodes = {Node::make("Concat", {"x", "x"}, {"twice"})};
  elseG.nodes[0].attributes = {Attribute::ofInt("axis", 0)};
  elseG.outputs = {f32("twice", {4})};
  Model m;
  m.opsets = {{"", 16}};
  m.graph.inputs = {f32("x", {2}), f32("addend", {2})};
  m.graph.initializers = {{"M", Tensor::scalar<int64_t>(1), ""},
                          {"stopAt", Tensor::scalar<int64_t>(2), ""},
                          {"cond", Tensor::scalar<bool>(true), ""}};
  Node branch = Node::make("If", {"cond"}, {"y"}, "if");
  branch.attributes = {Attribute::ofGraph("then_branch", thenG),
                       Attribute::ofGraph("else_branch", elseG)};
  m.graph.nodes = {branch};
  m.graph.outputs = {f32("y", {2})};
  return m;
}

TEST(ControlFlow, IfRunsTheTakenBranchWhoseNestedLoopCapturesTheTopGraphsValues) {
  Model m = nestedIfModel();
  const TensorMap in = {{"x", floats({2}, {1, 2})}, {"addend", floats({2}, {5, 5})}};
  EXPECT_EQ(runReference(m, in).at("y"), floats({2}, {6, 7}));
  m.graph.initializers[2].value = Tensor::scalar<bool>(false);
  m.graph.outputs = {f32("y", {4})};
  EXPECT_EQ(runReference(m, in).at("y"), floats({4}, {1, 2, 1, 2}));
}

TEST(ControlFlow, NestedGraphsRoundTripThroughOnnxAndPrint) {
  const Model m = nestedIfModel();
  const Model back = parseModel(serializeModel(m), "nested");
  EXPECT_EQ(back, m);
  EXPECT_EQ(valuesRead(m.graph.nodes[0]),
            (std::vector<std::string>{"cond", "M", "x", "addend", "stopAt"}));
  const std::string text = modelToText(m);
  EXPECT_NE(text.find("    then_branch:\n      final, sums = Loop(M, -, x)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("          s_next = Add(s, addend)"), std::string::npos) << text;
}

TEST(ControlFlow, ABodyOutputOfAnotherShapeThanDeclaredIsAnErrorNamingIt) {
  Model m = loopModel(2);
  Graph& body = m.graph.nodes[0].attributes[0].graphs[0];
  body.outputs[1] = f32("s_next", {3});
  m.graph.outputs[0] = f32("final", {3});
  try {
    runReference(m, {{"x", floats({2}, {1, 2})}, {"addend", floats({2}, {1, 1})}});
    FAIL() << "ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("subgraph 'acc' output 's_next' has shape [2]"),
              std::string::npos)
        << e.what();
  }
}

TEST(ControlFlow, TheValidityCheckRunsOurRulesInsideBodies) {
  // Well formed: valid.
  EXPECT_EQ(whyInvalid(loopModel(2)), std::nullopt);
  // A body output declared of another shape than its node computes.
  Model declared = loopModel(2);
  declared.graph.nodes[0].attributes[0].graphs[0].outputs[2] = f32("s_next", {3});
  declared.graph.outputs[1] = f32("sums", {2, 3});
  const auto why = whyInvalid(declared);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("Loop 'loop', subgraph 'acc': output 's_next' is declared float32[3], "
                      "nncheck's rules give float32[2]"),
            std::string::npos)
      << *why;
  // A body node whose operands do not broadcast: a captured value of another length.
  Model broken = loopModel(2);
  broken.graph.inputs[1] = f32("addend", {3});
  const auto bad = whyInvalid(broken);
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->find("Loop 'loop', subgraph 'acc': Add #0"), std::string::npos) << *bad;
}

TEST(ControlFlow, ALoopThatNeverStopsIsUnsupportedNotAHang) {
  Graph body;
  body.name = "forever";
  body.inputs = {ValueInfo::tensor("i", DType::Int64, {}), ValueInfo::tensor("c", DType::Bool, {}),
                 f32("s", {1})};
  body.nodes = {Node::make("Identity", {"c"}, {"c_out"}), Node::make("Neg", {"s"}, {"s_out"})};
  body.outputs = {ValueInfo::tensor("c_out", DType::Bool, {}), f32("s_out", {1})};
  Model m;
  m.opsets = {{"", 16}};
  m.graph.inputs = {f32("x", {1})};
  m.graph.initializers = {{"go", Tensor::scalar<bool>(true), ""}};
  Node loop = Node::make("Loop", {"", "go", "x"}, {"y"}, "endless");
  loop.attributes = {Attribute::ofGraph("body", body)};
  m.graph.nodes = {loop};
  m.graph.outputs = {f32("y", {1})};
  try {
    runReference(m, {{"x", floats({1}, {1})}});
    FAIL() << "ran";
  } catch (const Unsupported& e) {
    EXPECT_EQ(e.category(), "loop");
    EXPECT_NE(std::string(e.what()).find("Loop 'endless' runs past"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nncheck
