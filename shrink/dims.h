// Dims shrinking for ShrinkCandidates: one leaf dim smaller, or every leaf dim at once, the
// whole graph re-solved with z3 so every rule still holds; nullopt when no such graph exists.
//
//   auto smaller = shrink::shrinkDim(tc, "x0", 1, shrink::DimTarget::Two);
//
// A cut keeps a corner of each leaf's old data: the leading one, or the trailing one, so a
// failure that needs one element (INT64_MIN / -1 at [7, 2] of [8, 5]) still reaches [1, 1].
#pragma once

#include <optional>
#include <string>

#include "nncheck/test_case.h"

namespace nncheck::shrink {

// What to do with one leaf dim of size n.
enum class DimTarget {
  One,      // 1
  Two,      // 2 (n > 2): the smallest size at which "more than one" still holds
  Smaller,  // anything in [2, n) (n > 2)
};

// What the leaves cut to a smaller shape hold.
enum class Fill {
  Leading,   // their leading corner: every kept index as it was
  Trailing,  // their trailing corner: what sat at the end of a cut axis, now its last index
  Fresh,     // fresh random values
};

std::optional<TestCase> shrinkDim(const TestCase& tc, const std::string& leaf, size_t axis,
                                  DimTarget target, Fill fill = Fill::Leading);

// Every leaf dim at once: all to 1, else all halved (rounding up), where the rules allow: one
// step where one dim at a time takes many. nullopt when neither can be had.
std::optional<TestCase> shrinkAllDims(const TestCase& tc);

}  // namespace nncheck::shrink
