// The OpenCV DNN backend against the real engine from Debian.
#include <gtest/gtest.h>

#include "core/rng.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/opencv.h"
#include "nncheck/property.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

// x[1,2,5,5] -> Conv(w[3,2,3,3], b[3], pads 1) -> Relu, weights as initializers.
TestCase convReluCase() {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 13}};
  m.graph.name = "conv_relu";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 2, 5, 5})};
  Rng rng(7);
  auto random = [&](Shape s) {
    Tensor t(DType::Float32, std::move(s));
    for (float& v : t.span<float>()) v = static_cast<float>(rng.real(-1, 1));
    return t;
  };
  m.graph.initializers = {{"w", random({3, 2, 3, 3}), ""}, {"b", random({3}), ""}};
  Node conv = Node::make("Conv", {"x", "w", "b"}, {"c"}, "conv");
  conv.attributes = {Attribute::ofInts("kernel_shape", {3, 3}),
                     Attribute::ofInts("pads", {1, 1, 1, 1})};
  m.graph.nodes = {conv, Node::make("Relu", {"c"}, {"y"}, "relu")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 3, 5, 5})};
  tc.inputs["x"] = random({1, 2, 5, 5});
  return tc;
}

TEST(OpenCVBackend, IsRegisteredAndDeclaresFloat32WithInitializerWeights) {
  ASSERT_TRUE(engines().contains("opencv")) << "the opencv engine did not register itself";
  EXPECT_EQ(engines().make("opencv", "fusion=off")->name(), "opencv (cpu, fusion off)");
  EXPECT_EQ(engines().configurations("opencv").front(), "target=cpu,fusion=on");
  EXPECT_THROW(engines().make("opencv", "fusion=maybe"), Error);
  opencv::Backend cv;
  EXPECT_EQ(cv.capabilities().dtypes, std::vector<DType>{DType::Float32});
  EXPECT_TRUE(cv.capabilities().weightsMustBeInitializers);
  EXPECT_EQ(cv.name(), "opencv (cpu, fusion on)");
}

TEST(OpenCVBackend, ConvReluMatchesTheReferenceWithAndWithoutFusion) {
  TestCase tc = convReluCase();
  ASSERT_EQ(whyInvalid(tc.model), std::nullopt);
  for (bool fusion : {true, false}) {
    opencv::Backend cv({fusion, opencv::Target::Cpu});
    TensorMap got = runOn(cv, tc);
    EXPECT_NO_THROW(assertAllClose(got, runOn(reference(), tc))) << cv.name();
  }
}

TEST(OpenCVBackend, RunsIsolated) {
  opencv::Backend cv;
  TestCase tc = convReluCase();
  EXPECT_NO_THROW(assertAllClose(runOn(isolated(cv, 20s), tc), runOn(reference(), tc)));
}

Model modModel() {
  // A valid model OpenCV 4.6's ONNX importer has no layer for.
  Model m;
  m.opsets = {{"", 13}};
  m.graph.name = "mod";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {2, 3}),
                    ValueInfo::tensor("b", DType::Float32, {2, 3})};
  Node mod = Node::make("Mod", {"a", "b"}, {"y"}, "mod");
  mod.attributes = {Attribute::ofInt("fmod", 1)};
  m.graph.nodes = {mod};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  return m;
}

TEST(OpenCVBackend, AModelOpenCVRejectsIsUnsupportedWithOpenCVsMessage) {
  Model m = modModel();
  ASSERT_EQ(whyInvalid(m), std::nullopt);
  opencv::Backend cv;
  try {
    cv.run(m, {{"a", Tensor(DType::Float32, {2, 3})}, {"b", Tensor(DType::Float32, {2, 3})}});
    FAIL() << "OpenCV accepted a Mod";
  } catch (const Unsupported& e) {
    EXPECT_EQ(std::string(e.what()).rfind("opencv: OpenCV(4.6", 0), 0u) << e.what();
    // The importer names the node it could not handle.
    EXPECT_NE(std::string(e.what()).find("onnx_node!mod"), std::string::npos) << e.what();
  }
  TestCase tc{m, {{"a", Tensor(DType::Float32, {2, 3})}, {"b", Tensor(DType::Float32, {2, 3})}}};
  EXPECT_THROW(runOn(isolated(cv, 20s), tc), Unsupported);
}

TEST(OpenCVBackend, ScalarAndVectorOutputsKeepTheirDeclaredShape) {
  // OpenCV's Mat has at least two dims; the adapter restores ranks 0 and 1.
  for (const Shape& shape : {Shape{}, Shape{5}}) {
    Model m;
    m.opsets = {{"", 13}};
    m.graph.name = "relu";
    m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, shape)};
    m.graph.nodes = {Node::make("Relu", {"x"}, {"y"}, "relu")};
    m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, shape)};
    TestCase tc{m, randomInputs(m, 1)};
    opencv::Backend cv;
    TensorMap got = runOn(cv, tc);
    EXPECT_EQ(got.at("y").shape(), shape);
    EXPECT_NO_THROW(assertAllClose(got, runOn(reference(), tc)));
  }
}

}  // namespace
}  // namespace nncheck
