// Reduction kernels on values where a shortcut through double would give the wrong answer.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "nncheck/reference.h"

namespace nncheck {
namespace {

Tensor runArg(const char* op, const Tensor& x) {
  Node n = Node::make(op, {"x"}, {"y"}, "arg");
  n.attributes = {Attribute::ofInt("axis", 0), Attribute::ofInt("keepdims", 0)};
  return runReferenceNode(n, {x}).at(0);
}

TEST(Reductions, ArgMinAndArgMaxTellApartInt64sThatShareADouble) {
  // Both round to -2^63 as doubles; the second is the smaller.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const Tensor low = Tensor::fromVector<int64_t>({2}, {kMin + 2, kMin});
  EXPECT_EQ(runArg("ArgMin", low), Tensor::fromVector<int64_t>({}, {1}));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Tensor high = Tensor::fromVector<int64_t>({2}, {kMax - 1, kMax});
  EXPECT_EQ(runArg("ArgMax", high), Tensor::fromVector<int64_t>({}, {1}));
}

}  // namespace
}  // namespace nncheck
