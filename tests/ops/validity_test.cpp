#include "nncheck/validity.h"

#include <gtest/gtest.h>

#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "ops/rule.h"
#include "test_util.h"

namespace nncheck {
namespace {

// Node test models with their test inputs turned into initializers: ONNX's checker and strict
// shape inference accept them, and ONNX's inferred types equal those of nncheck's rules.
TEST(Validity, OnnxAndOurRulesAgreeOnEveryRegisteredNodeTest) {
  int checked = 0;
  std::vector<std::string> disagreements;
  for (auto& c : testing::registeredNodeCases()) {
    Model m = c.model;
    std::vector<ValueInfo> kept;
    for (const ValueInfo& v : m.graph.inputs) {
      auto it = c.inputs.find(v.name);
      if (it == c.inputs.end())
        kept.push_back(v);
      else
        m.graph.initializers.push_back({v.name, it->second, ""});
    }
    m.graph.inputs = kept;
    if (m.irVersion < 4) m.irVersion = 4;
    if (auto why = whyInvalid(m)) disagreements.push_back(c.dir.filename().string() + ": " + *why);
    ++checked;
  }
  EXPECT_GE(checked, 400);
  for (const auto& d : disagreements) ADD_FAILURE() << d;
}

Model matmulModel(Shape a, Shape b, Shape out) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, a),
                    ValueInfo::tensor("b", DType::Float32, b)};
  m.graph.nodes.push_back(Node::make("MatMul", {"a", "b"}, {"y"}, "mm"));
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, out)};
  return m;
}

// A malformed model's shape values whose product passes int64 (found by the loader's fuzzer) are
// a clear error, not signed overflow.
TEST(Validity, ShapeValuesWhoseProductOverflowsAreAnError) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {6291453})};
  m.graph.initializers = {
      {"s", Tensor::fromVector<int64_t>({3}, {6291453, 8796093022207, 8796093022207}), ""}};
  m.graph.nodes = {Node::make("Reshape", {"x", "s"}, {"y"}, "r")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1})};
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("overflows int64"), std::string::npos) << *why;
  EXPECT_NE(why->find("Reshape 'r'"), std::string::npos) << *why;
}

// The same for the other rules that multiply a dim by a value or attribute (Tile's was found by
// the loader's fuzzer): each is an error naming the node, whatever sanitizers watch.
TEST(Validity, DimsTimesValuesOrAttributesPastInt64AreAnError) {
  const int64_t huge = int64_t{1} << 62;
  auto model = [](Node n, std::vector<ValueInfo> inputs, std::vector<Initializer> inits) {
    Model m;
    m.opsets = {{"", 14}};
    m.graph.inputs = std::move(inputs);
    m.graph.initializers = std::move(inits);
    m.graph.nodes = {std::move(n)};
    m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1})};
    return m;
  };
  Node conv = Node::make("Conv", {"x", "w"}, {"y"}, "n");
  conv.attributes = {Attribute::ofInts("dilations", {huge}),
                     Attribute::ofInts("kernel_shape", {3})};
  Node convTranspose = Node::make("ConvTranspose", {"x", "w"}, {"y"}, "n");
  convTranspose.attributes = {Attribute::ofInts("strides", {huge})};
  Node depthToSpace = Node::make("DepthToSpace", {"x"}, {"y"}, "n");
  depthToSpace.attributes = {Attribute::ofInt("blocksize", huge)};
  const std::vector<std::pair<std::string, Model>> cases = {
      {"Tile", model(Node::make("Tile", {"x", "r"}, {"y"}, "n"),
                     {ValueInfo::tensor("x", DType::Float32, {4})},
                     {{"r", Tensor::fromVector<int64_t>({1}, {huge}), ""}})},
      {"Conv", model(conv, {ValueInfo::tensor("x", DType::Float32, {1, 1, 8})},
                     {{"w", Tensor(DType::Float32, {1, 1, 3}), ""}})},
      {"ConvTranspose", model(convTranspose, {ValueInfo::tensor("x", DType::Float32, {1, 1, 8})},
                              {{"w", Tensor(DType::Float32, {1, 1, 3}), ""}})},
      {"DepthToSpace",
       model(depthToSpace, {ValueInfo::tensor("x", DType::Float32, {1, 4, 2, 2})}, {})}};
  for (const auto& [op, m] : cases) {
    const auto why = whyInvalid(m);
    ASSERT_TRUE(why) << op;
    EXPECT_NE(why->find("overflows int64"), std::string::npos) << op << ": " << *why;
    EXPECT_NE(why->find(op + " 'n'"), std::string::npos) << *why;
  }
}

TEST(Validity, AcceptsAValidModel) {
  EXPECT_EQ(whyInvalid(matmulModel({2, 3}, {3, 5}, {2, 5})), std::nullopt);
}

TEST(Validity, MismatchedInnerDimsAreRejected) {
  auto why = whyInvalid(matmulModel({2, 3}, {4, 5}, {2, 5}));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("MatMul"), std::string::npos) << *why;
}

TEST(Validity, AWrongDeclaredOutputShapeIsRejected) {
  auto why = whyInvalid(matmulModel({2, 3}, {3, 5}, {2, 6}));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("shape inference"), std::string::npos) << *why;
}

TEST(Validity, OurRuleRejectionNamesNodeOpAndShapes) {
  // Valid for ONNX, but a shape operand that is a graph input cannot be checked statically.
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3}),
                    ValueInfo::tensor("s", DType::Int64, {1})};
  m.graph.nodes.push_back(Node::make("Reshape", {"x", "s"}, {"y"}, "r"));
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {6})};
  auto why = whyInvalid(m);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("Reshape 'r'"), std::string::npos) << *why;
  EXPECT_NE(why->find("[2, 3]"), std::string::npos) << *why;
}

// What the reference used to run and an engine then "failed": models that are not valid ONNX.
TEST(Validity, StructuralFaultsAreRejectedNamingWhatIsWrong) {
  auto whyNot = [](const std::function<void(Model&)>& spoil) {
    Model m = matmulModel({2, 3}, {3, 4}, {2, 4});
    spoil(m);
    try {
      checkStructure(m);
    } catch (const Error& e) {
      EXPECT_TRUE(whyInvalid(m).has_value());
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(whyNot([](Model&) {}), "(accepted)");
  EXPECT_NE(whyNot([](Model& m) {
              m.graph.outputs.push_back(m.graph.outputs[0]);
            }).find("graph output 'y' is listed twice"),
            std::string::npos);
  EXPECT_NE(whyNot([](Model& m) {
              m.graph.outputs.push_back(m.graph.inputs[0]);
            }).find("is also a graph input"),
            std::string::npos);
  EXPECT_NE(
      whyNot([](Model& m) { m.graph.inputs.push_back(m.graph.inputs[0]); }).find("is listed twice"),
      std::string::npos);
  EXPECT_NE(whyNot([](Model& m) {
              m.opsets = {{"", 10000}};
            }).find("opset 10000"),
            std::string::npos);
  EXPECT_NE(whyNot([](Model& m) {
              m.opsets = {{"", (int64_t{1} << 32) + 14}};
            }).find("opset 4294967310"),
            std::string::npos);
  EXPECT_NE(whyNot([](Model& m) { m.irVersion = 999; }).find("ir_version 999"), std::string::npos);
}

TEST(Validity, AModelThatCrashesOnnxShapeInferenceIsRejectedByOurRulesFirst) {
  // Found by fuzz/model_loader_fuzz: a ConvTranspose whose input ranks disagree makes Debian's
  // ONNX 1.12 read out of bounds in its shape inference (SIGSEGV).
  const Model m = loadModel(NNCHECK_SOURCE_DIR "/tests/fixtures/convtranspose_ranks_disagree.onnx");
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("ConvTranspose"), std::string::npos) << *why;
}

// A 1x1 stride-2 MaxPool with SAME padding (real networks have them) needs a negative total
// padding, which the spec reads two ways: valid for a user, but what the generator, mutations and
// the shrinker make (inside a DefinedOnly scope) stays out of it.
TEST(Validity, ACaseTheSpecReadsTwoWaysIsValidButNotMade) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 1, 4, 4})};
  Node pool = Node::make("MaxPool", {"x"}, {"y"}, "pool");
  pool.attributes = {Attribute::ofInts("kernel_shape", {1, 1}),
                     Attribute::ofInts("strides", {2, 2}),
                     Attribute::ofString("auto_pad", "SAME_UPPER")};
  m.graph.nodes = {pool};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 1, 2, 2})};
  EXPECT_EQ(whyInvalid(m), std::nullopt);
  const ops::DefinedOnly definedOnly;
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("SAME padding's total >= 0"), std::string::npos) << *why;
}

// Edge padding with a negative pad (a crop) on an axis padded at its other end: the spec does
// not say whether the crop comes first (ORT crops first and refuses; nncheck's reference pads
// first). Valid for a user; never made (an ORT campaign's generated models had it).
TEST(Validity, EdgePaddingWithANegativePadIsValidButNotMade) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 1})};
  m.graph.initializers = {{"pads", Tensor::fromVector<int64_t>({4}, {0, 1, 0, -1}), ""}};
  Node pad = Node::make("Pad", {"x", "pads"}, {"y"}, "pad");
  pad.attributes = {Attribute::ofString("mode", "edge")};
  m.graph.nodes = {pad};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 1})};
  EXPECT_EQ(whyInvalid(m), std::nullopt);
  const ops::DefinedOnly definedOnly;
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("edge padding with a negative pad at axis 1"), std::string::npos) << *why;
}

// Gemm on integers with a fractional alpha: the spec does not say whether alpha is converted to
// the integer type first (OpenVINO, TVM) or applied in float (ONNX's reference). Valid; never made
// (an OpenVINO campaign's generated models had it).
TEST(Validity, IntegerGemmWithAFractionalAlphaIsValidButNotMade) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Int64, {2, 2})};
  m.graph.initializers = {{"b", Tensor::fromVector<int64_t>({2, 2}, {1, 2, 3, 4}), ""}};
  Node gemm = Node::make("Gemm", {"a", "b"}, {"y"}, "gemm");
  gemm.attributes = {Attribute::ofFloat("alpha", 1.5f)};
  m.graph.nodes = {gemm};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Int64, {2, 2})};
  EXPECT_EQ(whyInvalid(m), std::nullopt);
  const ops::DefinedOnly definedOnly;
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("whole alpha and beta on integers"), std::string::npos) << *why;
  gemm.attributes = {Attribute::ofFloat("alpha", 2.0f)};
  m.graph.nodes = {gemm};
  EXPECT_EQ(whyInvalid(m), std::nullopt) << "a whole alpha is defined";
}

// GatherElements whose indices are smaller than data off the axis: the spec neither allows nor
// forbids it (ONNX's reference and OpenVINO refuse it, ORT and PyTorch take it). Valid; never made.
TEST(Validity, GatherElementsWithSmallerIndicesOffTheAxisIsValidButNotMade) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 2})};
  m.graph.initializers = {{"i", Tensor::fromVector<int64_t>({1, 1}, {0}), ""}};
  m.graph.nodes = {Node::make("GatherElements", {"x", "i"}, {"y"}, "gather")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 1})};
  EXPECT_EQ(whyInvalid(m), std::nullopt);
  const ops::DefinedOnly definedOnly;
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("indices as large as data off the axis"), std::string::npos) << *why;
}

// A scalar's Resize: its sizes would hold no element, which ONNX reads as no sizes at all.
TEST(Validity, AResizeOfAScalarIsInvalid) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {})};
  m.graph.initializers = {{"sizes", Tensor(DType::Int64, {0}), ""}};
  m.graph.nodes = {Node::make("Resize", {"x", "", "", "sizes"}, {"y"}, "resize")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {})};
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("X has rank >= 1"), std::string::npos) << *why;
}

TEST(Validity, AResizeScaleThatOverflowsADimIsAnError) {
  // Found by the same fuzzer: a scale of 1e30 overflowed the conversion to int64 (UB).
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 1, 2, 2})};
  m.graph.initializers = {{"roi", Tensor(DType::Float32, {0}), ""},
                          {"scales", Tensor::fromVector<float>({4}, {1, 1, 1e30f, 1e30f}), ""}};
  m.graph.nodes = {Node::make("Resize", {"x", "roi", "scales"}, {"y"}, "resize")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 1, 2, 2})};
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("out of range"), std::string::npos) << *why;
}

TEST(Validity, PadsThatOverflowThePaddedSizeAreAnError) {
  // Found by fuzz/model_loader_fuzz: a dim plus huge pads overflowed int64 (UB).
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1})};
  m.graph.initializers = {
      {"pads", Tensor::fromVector<int64_t>({2}, {int64_t{1} << 62, int64_t{3} << 61}), ""}};
  m.graph.nodes = {Node::make("Pad", {"x", "pads"}, {"y"}, "pad")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1})};
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("overflows int64"), std::string::npos) << *why;
  // The fuzzer's own input, which UBSan flagged in the sum.
  const auto fuzzed =
      whyInvalid(loadModel(NNCHECK_SOURCE_DIR "/tests/fixtures/pad_sum_overflows.onnx"));
  ASSERT_TRUE(fuzzed.has_value());
  EXPECT_NE(fuzzed->find("overflows int64"), std::string::npos) << *fuzzed;
}

TEST(Validity, SplitSizesThatOverflowTheirSumAreAnError) {
  // Found by fuzz/model_loader_fuzz: two huge sizes overflowed int64 when summed (UB).
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {4})};
  m.graph.initializers = {
      {"split", Tensor::fromVector<int64_t>({2}, {int64_t{1} << 62, int64_t{3} << 61}), ""}};
  m.graph.nodes = {Node::make("Split", {"x", "split"}, {"a", "b"}, "split")};
  m.graph.outputs = {ValueInfo::tensor("a", DType::Float32, {2}),
                     ValueInfo::tensor("b", DType::Float32, {2})};
  const auto why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("split sizes add up to the split axis"), std::string::npos) << *why;
}

}  // namespace
}  // namespace nncheck
