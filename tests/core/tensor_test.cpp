// Tensors: typed views (const ones too), counts and their limits, equality, rendering.
#include "nncheck/tensor.h"

#include <gtest/gtest.h>

#include "nncheck/error.h"

namespace nncheck {
namespace {

TEST(Tensor, ConstViewsReadWhatMutableViewsWrote) {
  Tensor t(DType::Float32, {2, 3});
  t.span<float>()[4] = 1.5f;
  const Tensor& c = t;
  EXPECT_EQ(c.span<const float>()[4], 1.5f);
  EXPECT_EQ(t.span<const float>().size(), 6u);
  EXPECT_THROW(t.span<const double>(), Error);  // the dtype is checked for const views too
}

TEST(Tensor, ElementCountsRejectNegativeDimsAndOverflow) {
  EXPECT_EQ(elementCount({2, 3, 4}), 24);
  EXPECT_EQ(elementCount({}), 1);
  EXPECT_THROW(elementCount({2, -1}), Error);
  EXPECT_THROW(elementCount({int64_t{1} << 40, int64_t{1} << 40}), Error);
}

TEST(Tensor, FromVectorChecksTheCountAndEqualityComparesEverything) {
  EXPECT_THROW(Tensor::fromVector<int64_t>({2, 2}, {1, 2, 3}), Error);
  Tensor a = Tensor::fromVector<int64_t>({3}, {1, 2, 3});
  EXPECT_EQ(a, Tensor::fromVector<int64_t>({3}, {1, 2, 3}));
  EXPECT_FALSE(a == Tensor::fromVector<int64_t>({3, 1}, {1, 2, 3}));  // shape
  EXPECT_FALSE(a == Tensor::fromVector<int64_t>({3}, {1, 2, 4}));     // values
  EXPECT_EQ(tensorToString(a), "int64[3] {1, 2, 3}");
}

}  // namespace
}  // namespace nncheck
