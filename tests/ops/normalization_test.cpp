// Normalization kernels that ONNX 1.12's node suite has no case for, checked against the
// specification's formula computed here independently.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

#include "nncheck/reference.h"

namespace nncheck {
namespace {

// LpNormalization: y = x / (sum |x|^p)^(1/p) along `axis`, on a [2,3] input.
TEST(Normalization, LpNormalizationFollowsTheSpecificationsFormula) {
  const std::vector<float> x = {3, -4, 1, -2, 0.5f, 6};
  const Tensor in = Tensor::fromVector<float>({2, 3}, x);
  for (int64_t p : {1, 2})
    for (int64_t axis : {-1, 0}) {
      Node n = Node::make("LpNormalization", {"x"}, {"y"}, "lp");
      n.attributes = {Attribute::ofInt("axis", axis), Attribute::ofInt("p", p)};
      const Tensor y = runReferenceNode(n, {in}).at(0);
      ASSERT_EQ(y.shape(), in.shape());
      const std::span<const float> got = y.span<const float>();
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) {
          double sum = 0;
          for (int k = 0; k < (axis == 0 ? 2 : 3); ++k) {
            const float v = axis == 0 ? x[k * 3 + c] : x[r * 3 + k];
            sum += std::pow(std::fabs(v), static_cast<double>(p));
          }
          const double want = x[r * 3 + c] / std::pow(sum, 1.0 / static_cast<double>(p));
          EXPECT_NEAR(got[r * 3 + c], want, 1e-6) << "p=" << p << " axis=" << axis;
        }
    }
}

}  // namespace
}  // namespace nncheck
