// The reference interpreter's entry points: a whole model, every value, one node alone.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "test_util.h"

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
  const int64_t before = setMemoryLimit(1000);
  EXPECT_EQ(memoryLimit(), 1000);
  try {
    runReference(m, in);
    ADD_FAILURE() << "no error";
  } catch (const Unsupported& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("third"), std::string::npos) << what;
    EXPECT_NE(what.find("1000 bytes per run"), std::string::npos) << what;
  }
  setMemoryLimit(before);
  EXPECT_NO_THROW(runReference(m, in));
  EXPECT_THROW(setMemoryLimit(0), Error);
  EXPECT_EQ(memoryLimit(), before);
}

// Sets the reference's time limit for a scope.
class TimeLimit {
 public:
  explicit TimeLimit(std::chrono::milliseconds limit) : before_(setReferenceTimeLimit(limit)) {}
  ~TimeLimit() { setReferenceTimeLimit(before_); }

 private:
  std::chrono::milliseconds before_;
};

// What a run ended with: "" when it finished, else its Unsupported category and message.
std::pair<std::string, std::string> unsupportedOf(const Model& m, const TensorMap& in) {
  try {
    runReference(m, in);
  } catch (const Unsupported& e) {
    return {e.category(), e.what()};
  }
  return {"", ""};
}

TEST(Interpreter, NestedLoopsStopAtTheTimeLimitNamingTheLoop) {
  // The probe's model, two nested Loops of 100,000 trips, hung `nncheck run`, `corpus check`
  // and `reduce`: the reference runs in process, out of --timeout's reach. Here 2,000 trips each
  // (seconds of body runs), so that a broken limit fails the test instead of hanging it.
  const Model m = testing::nestedLoops(2000);
  ASSERT_NO_THROW(checkValid(m));
  const TensorMap in = {{"x", Tensor::fromVector<float>({1}, {1})}};
  TimeLimit limit(std::chrono::milliseconds(100));
  const auto [category, message] = unsupportedOf(m, in);
  EXPECT_EQ(category, "time");
  EXPECT_NE(message.find("Loop 'outer'"), std::string::npos) << message;
  EXPECT_NE(message.find("time limit of 100 ms per run"), std::string::npos) << message;
  // The same through the run of every value (localization, value search).
  EXPECT_THROW(runReferenceAllValues(m, in), Unsupported);
}

TEST(Interpreter, ALongKernelStopsInsideAtTheTimeLimit) {
  // A 2048x2048 product built from ConstantOfShape: seconds of one kernel, stopped inside it.
  Model m;
  m.opsets = {{"", 17}};
  m.graph.initializers = {{"shape", Tensor::fromVector<int64_t>({2}, {2048, 2048}), ""}};
  Node fill = Node::make("ConstantOfShape", {"shape"}, {"a"}, "fill");
  fill.attributes = {Attribute::ofTensor("value", Tensor::fromVector<float>({1}, {0.5f}))};
  m.graph.nodes = {fill, Node::make("MatMul", {"a", "a"}, {"y"}, "product")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2048, 2048})};
  TimeLimit limit(std::chrono::milliseconds(100));
  const auto [category, message] = unsupportedOf(m, {});
  EXPECT_EQ(category, "time");
  EXPECT_NE(message.find("MatMul 'product'"), std::string::npos) << message;
}

TEST(Interpreter, TwoHundredThousandNodesRunInTimeLinearInTheirCount) {
  // The memory check before each node added up every value held: quadratic, 2 * 10^10 steps and
  // hours for the probe's 200,000 nodes. Counted as values are stored, the run takes about a
  // second (several under sanitizers), far inside the limit set here.
  const Model m = testing::negChain(200000);
  TimeLimit limit(std::chrono::seconds(60));
  const TensorMap out = runReference(m, {{"v0", Tensor::fromVector<float>({2}, {1, -2})}});
  EXPECT_EQ(out.at("v200000"), Tensor::fromVector<float>({2}, {1, -2}));
}

TEST(Interpreter, ALoopReadingALargeValueIsStoppedByWhatItReads) {
  // Each trip copies a 1 MiB value into the body and sums it, writing one number. Counting only
  // what nodes write, the clock was read once in about 20,000 trips: these 10,000 (seconds)
  // ran to their end.
  Model m;
  m.opsets = {{"", 16}};
  m.graph.name = "reads";
  m.graph.initializers = {{"M", Tensor::scalar<int64_t>(10000), ""},
                          {"big", Tensor(DType::Float32, {1 << 18}), ""}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {})};
  Graph body;
  body.name = "sum_big";
  body.inputs = {ValueInfo::tensor("i", DType::Int64, {}), ValueInfo::tensor("c", DType::Bool, {}),
                 ValueInfo::tensor("s", DType::Float32, {})};
  Node sum = Node::make("ReduceSum", {"big"}, {"t"});
  sum.attributes = {Attribute::ofInt("keepdims", 0)};
  body.nodes = {Node::make("Identity", {"c"}, {"c_out"}), sum,
                Node::make("Add", {"s", "t"}, {"s_out"})};
  body.outputs = {ValueInfo::tensor("c_out", DType::Bool, {}),
                  ValueInfo::tensor("s_out", DType::Float32, {})};
  Node loop = Node::make("Loop", {"M", "", "x"}, {"y"}, "summing");
  loop.attributes = {Attribute::ofGraph("body", body)};
  m.graph.nodes = {loop};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {})};
  TimeLimit limit(std::chrono::milliseconds(200));
  const auto [category, message] = unsupportedOf(m, {{"x", Tensor::scalar<float>(0)}});
  EXPECT_EQ(category, "time") << "the loop ran to its end";
  EXPECT_NE(message.find("Loop 'summing'"), std::string::npos) << message;
}

TEST(Interpreter, TheTimeLimitIsFromAMillisecondToAWeek) {
  EXPECT_EQ(referenceTimeLimit(), kDefaultReferenceTimeLimit);
  EXPECT_THROW(setReferenceTimeLimit(std::chrono::milliseconds(0)), Error);
  EXPECT_THROW(setReferenceTimeLimit(std::chrono::hours(24 * 8)), Error);
  EXPECT_EQ(referenceTimeLimit(), kDefaultReferenceTimeLimit);
}

}  // namespace
}  // namespace nncheck
