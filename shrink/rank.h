// Rank shrinking for ShrinkCandidates: an axis of size 1 dropped from a leaf (graph input or
// initializer) and from the values computed from it, with the "axis", "axes" and "perm"
// attributes that name later axes renumbered. nullopt when a node's rule no longer holds (the
// candidate is then validated like any other).
//
//   auto lower = shrink::dropAxis(tc, "x0", 0);   // x0 [1, 3, 4] -> [3, 4], and downstream
#pragma once

#include <optional>
#include <string>

#include "nncheck/test_case.h"

namespace nncheck::shrink {

std::optional<TestCase> dropAxis(const TestCase& tc, const std::string& leaf, size_t axis);

}  // namespace nncheck::shrink
