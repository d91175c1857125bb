// What value search keeps true of every node, in one place: its outputs finite and within the
// value bound (or its op's own, e.g. Pow's), its inputs inside their ops' safe ranges (Log's
// >= 0.01, Asin's within +-0.999: away from NaN and from where float rounding is amplified
// beyond any tolerance), and away from the steps of discontinuous ops (Floor's input off the
// integers, Less's inputs apart, no ties for ArgMax; ops::StabilityCall). Used by value search and
// by the generator, which checks each node as it grows the model.
//
//   Gradients seeds;
//   int64_t bad = checkNode(spec, node, values, 1e6, &seeds);   // seeds: hinge slopes
#pragma once

#include "interp/gradients.h"
#include "ops/op_spec.h"

namespace nncheck {

// The node's elements that break the rules above (non-finite inputs are counted where they are
// computed, not here). With `seeds`, adds for each one the slope of a hinge loss that moves it
// back: dL/d(value) on the input or output that is wrong.
int64_t checkNode(const ops::OpSpec& spec, const Node& node, const TensorMap& values, double bound,
                  Gradients* seeds = nullptr);

}  // namespace nncheck
