// Value search: inputs and weights that keep a model's every value finite and every op inside
// its safe domain (Log's input positive, Asin's within [-1, 1], a divisor away from 0, Pow's
// result bounded, every value within +-1e6). Violations become hinge losses; reverse-mode
// gradients through the reference (declared per op) move the graph inputs and float weight
// initializers; when the budget runs out the values are resampled and the search restarts.
// Nodes inside If, Loop and Scan bodies are judged and differentiated on the model's unrolled
// run, and bodies' own float initializers are moved too.
// Never reports success without checking: `finite` is true only when a last forward run shows
// every value finite and inside its domain.
//
//   nncheck::TestCase tc = nncheck::makeTestCase(cfg, seed);
//   nncheck::ValueSearchResult r = nncheck::searchValues(tc);   // edits tc's values in place
//   if (!r.finite) { /* still NaN/Inf: r.violations says how many elements */ }
#pragma once

#include <cstdint>

#include "nncheck/test_case.h"

namespace nncheck {

struct ValueSearchOptions {
  int maxSteps = 40;        // gradient steps per attempt
  int restarts = 3;         // resampled attempts after the first
  int patience = 4;         // an attempt ends after this many steps without fewer violations
  double stepSize = 0.2;    // an element's first move, relative to its magnitude
  double valueBound = 1e6;  // |v| beyond this counts as a violation
};

struct ValueSearchResult {
  bool finite = false;     // every value finite and inside its op's domain at the end
  bool wasFinite = false;  // already so before the search
  int steps = 0;           // gradient steps taken over all attempts
  int restarts = 0;        // resamplings used
  int64_t violations = 0;  // elements outside a domain (or non-finite) at the end
  double seconds = 0;
};

// Searches tc's graph-input values and float weight initializers (not shape operands) in place.
// Deterministic: the same case and options give the same values.
ValueSearchResult searchValues(TestCase& tc, const ValueSearchOptions& options = {});

}  // namespace nncheck
