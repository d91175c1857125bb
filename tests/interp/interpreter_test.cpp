// The reference interpreter's entry points: a whole model, every value, one node alone.
#include <gtest/gtest.h>

#include <cmath>

#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

TEST(Interpreter, OneNodeRunsAloneOnItsInputValues) {
  Node add = Node::make("Add", {"a", "b"}, {"c"}, "add");
  std::vector<Tensor> out = runReferenceNode(
      add, {Tensor::fromVector<float>({2}, {1, 2}), Tensor::fromVector<float>({2}, {10, 20})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], Tensor::fromVector<float>({2}, {11, 22}));
  // Broadcasting and the node's attributes apply as in a model.
  Node concat = Node::make("Concat", {"a", "b"}, {"c"}, "cat");
  concat.attributes = {Attribute::ofInt("axis", 0)};
  out = runReferenceNode(
      concat, {Tensor::fromVector<int64_t>({1}, {1}), Tensor::fromVector<int64_t>({2}, {2, 3})});
  EXPECT_EQ(out[0], Tensor::fromVector<int64_t>({3}, {1, 2, 3}));
}

TEST(Interpreter, PerturbedRunsMoveFloatsByTheirUlpsDeterministicallyAndNotIntegers) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {64}),
                    ValueInfo::tensor("i", DType::Int64, {2})};
  m.graph.nodes = {Node::make("Relu", {"x"}, {"y"}, "n0"), Node::make("Neg", {"i"}, {"j"}, "n1")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {64}),
                     ValueInfo::tensor("j", DType::Int64, {2})};
  Tensor x(DType::Float32, {64});
  for (size_t k = 0; k < 64; ++k) x.span<float>()[k] = 1.0f + static_cast<float>(k);
  const TensorMap in = {{"x", x}, {"i", Tensor::fromVector<int64_t>({2}, {3, -4})}};
  const TensorMap exact = runReference(m, in);
  const TensorMap a = runReferencePerturbed(m, in, 1, 4), b = runReferencePerturbed(m, in, 2, 4);
  EXPECT_EQ(a.at("y"), runReferencePerturbed(m, in, 1, 4).at("y"));
  EXPECT_NE(a.at("y"), b.at("y"));
  EXPECT_NE(a.at("y"), exact.at("y"));
  for (int64_t k = 0; k < 64; ++k) {
    const double want = exact.at("y").toDouble(k);
    EXPECT_LE(std::abs(a.at("y").toDouble(k) - want), 5 * 0x1.0p-23 * want);
  }
  EXPECT_EQ(a.at("j"), exact.at("j"));
}

TEST(Interpreter, ANodeGivenTheWrongInputsSaysWhich) {
  Node add = Node::make("Add", {"a", "b"}, {"c"}, "add");
  try {
    runReferenceNode(
        add, {Tensor::fromVector<float>({2}, {1, 2}), Tensor::fromVector<float>({3}, {1, 2, 3})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Add"), std::string::npos) << e.what();
  }
  EXPECT_THROW(runReferenceNode(add, {Tensor(DType::Float32, {1}), Tensor(DType::Float32, {1}),
                                      Tensor(DType::Float32, {1})}),
               Error);
}

TEST(Interpreter, AnOutputPastTheMemoryBudgetIsUnsupportedNamingTheNode) {
  // Tile by [2^40, 2^40]: before, the output's allocation threw std::invalid_argument from
  // outside the kernel's error handling, and `nncheck reduce` aborted.
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 2})};
  m.graph.initializers = {
      {"r", Tensor::fromVector<int64_t>({2}, {int64_t{1} << 40, int64_t{1} << 40}), ""}};
  m.graph.nodes = {Node::make("Tile", {"x", "r"}, {"y"}, "tile")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {})};
  try {
    runReference(m, {{"x", Tensor(DType::Float32, {2, 2})}});
    FAIL() << "no error";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("tile"), std::string::npos) << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile"), std::string::npos) << e.what();
  }
}

TEST(Interpreter, ARunPastItsMemoryLimitIsUnsupportedBeforeAllocatingNamingTheNode) {
  // Three 256-byte values fit in 1000 bytes; the fourth does not. Before, no limit applied to a
  // run as a whole, and a chain of large Expands took 4 GB before any error.
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {8, 8})};
  m.graph.nodes = {Node::make("Add", {"x", "x"}, {"a"}, "first"),
                   Node::make("Add", {"a", "a"}, {"b"}, "second"),
                   Node::make("Add", {"b", "b"}, {"c"}, "third")};
  m.graph.outputs = {ValueInfo::tensor("c", DType::Float32, {8, 8})};
  const TensorMap in = {{"x", Tensor(DType::Float32, {8, 8})}};
  ASSERT_NO_THROW(runReference(m, in));
  const int64_t before = setReferenceMemoryLimit(1000);
  EXPECT_EQ(referenceMemoryLimit(), 1000);
  try {
    runReference(m, in);
    ADD_FAILURE() << "no error";
  } catch (const Unsupported& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("third"), std::string::npos) << what;
    EXPECT_NE(what.find("1000 bytes per run"), std::string::npos) << what;
  }
  setReferenceMemoryLimit(before);
  EXPECT_NO_THROW(runReference(m, in));
  EXPECT_THROW(setReferenceMemoryLimit(0), Error);
  EXPECT_EQ(referenceMemoryLimit(), before);
}

}  // namespace
}  // namespace nncheck
