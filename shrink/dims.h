// Dims shrinking for ShrinkCandidates: one leaf dim smaller (or 1), the whole graph re-solved
// with z3 so every rule still holds; nullopt when no such graph exists.
#pragma once

#include <optional>
#include <string>

#include "nncheck/test_case.h"

namespace nncheck::shrink {

std::optional<TestCase> shrinkDim(const TestCase& tc, const std::string& leaf, size_t axis,
                                  bool toOne, bool refill = false);

}  // namespace nncheck::shrink
