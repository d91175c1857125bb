// Tensors as script literals: integers the C++ script's doubles hold exactly (INT64_MIN is one,
// INT64_MAX is not) and a refusal naming the value otherwise.
#include "core/script_literal.h"

#include <gtest/gtest.h>

#include <limits>

#include "nncheck/error.h"

namespace nncheck {
namespace {

Tensor int64s(std::vector<int64_t> values) {
  Tensor t(DType::Int64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.span<int64_t>()[i] = values[i];
  return t;
}

TEST(ScriptLiteral, CppHoldsTheIntegersADoubleHoldsExactly) {
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(cppTensorLiteral(int64s({lowest, int64_t{1} << 60, -3}), ""),
            "{\"int64\", {3}, {-9.2233720368547758e+18, 1.152921504606847e+18, -3}}");
  try {
    cppTensorLiteral(int64s({std::numeric_limits<int64_t>::max()}), "");
    FAIL() << "INT64_MAX is no double";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("9223372036854775807 is not one"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(cppTensorLiteral(int64s({(int64_t{1} << 53) + 1}), ""), Error);
}

TEST(ScriptLiteral, ListsWrapTwelveToALine) {
  std::vector<int64_t> values(13, 1);
  EXPECT_EQ(pythonArrayLiteral(int64s(values), "  "),
            "np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,\n  1], dtype=np.int64).reshape([13])");
}

}  // namespace
}  // namespace nncheck
