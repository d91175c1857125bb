#include "nncheck/compare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nncheck {
namespace {

TEST(Compare, FloatsUseOnnxTolerancesAndNanEqualsNan) {
  auto f = [](std::vector<float> v) {
    return Tensor::fromVector<float>({static_cast<int64_t>(v.size())}, v);
  };
  EXPECT_TRUE(compareTensors(f({1.0f, NAN}), f({1.0005f, NAN})).ok);
  Comparison c = compareTensors(f({1.0f, 2.0f}), f({1.0f, 2.01f}));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_NEAR(c.maxAbsError, 0.01, 1e-6);
  EXPECT_NE(c.message.find("first at [1]"), std::string::npos) << c.message;
  EXPECT_FALSE(compareTensors(f({INFINITY}), f({1e30f})).ok);
  EXPECT_FALSE(compareTensors(f({NAN}), f({0.0f})).ok);
  // A non-finite value where a finite one belongs is an unbounded error, not a zero one.
  Comparison inf = compareTensors(f({1.0f, INFINITY}), f({1.0f, 1641.0f}));
  EXPECT_TRUE(std::isinf(inf.maxAbsError));
  EXPECT_TRUE(std::isinf(inf.maxRelError));
  EXPECT_TRUE(compareTensors(f({-INFINITY}), f({-INFINITY})).ok);
  EXPECT_FALSE(compareTensors(f({-INFINITY}), f({INFINITY})).ok);
}

TEST(Compare, IntegersAreExactAndShapesMustMatch) {
  auto i = Tensor::fromVector<int64_t>({2}, {1, 2});
  EXPECT_TRUE(compareTensors(i, i).ok);
  EXPECT_FALSE(compareTensors(Tensor::fromVector<int64_t>({2}, {1, 3}), i).ok);
  Comparison c = compareTensors(Tensor::fromVector<int64_t>({1, 2}, {1, 2}), i);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("int64[2]"), std::string::npos) << c.message;
}

}  // namespace
}  // namespace nncheck
