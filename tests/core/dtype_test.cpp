#include "nncheck/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nncheck/error.h"

namespace nncheck {
namespace {

TEST(Half, EveryNonNanBitPatternRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float f = Half::toFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    ASSERT_EQ(Half::fromFloat(f), bits) << "bits 0x" << std::hex << bits << " -> " << f;
  }
}

TEST(Half, RoundsToNearestEvenAndOverflowsToInfinity) {
  EXPECT_EQ(static_cast<float>(Half(1.0f + 1.0f / 4096)), 1.0f);  // half-way: rounds to even
  EXPECT_EQ(static_cast<float>(Half(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);
  EXPECT_EQ(static_cast<float>(Half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(65520.0f))));
  EXPECT_EQ(static_cast<float>(Half(5.960464477539063e-08f)), 5.960464477539063e-08f);  // subnormal
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
}

TEST(DType, NamesRoundTripAndUnknownNamesAreRejected) {
  for (DType t : computeDTypes()) EXPECT_EQ(dtypeFromName(dtypeName(t)), t);
  try {
    dtypeFromName("float33");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("float33"), std::string::npos);
  }
}

}  // namespace
}  // namespace nncheck
