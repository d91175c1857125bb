// The one vocabulary for what happened to a test case, from an isolated engine run to the
// corpus: each layer uses the part that applies to it (an engine run is Pass, Unsupported,
// Error, Crash or Hang; a judged case adds NonFinite and Mismatch).
//
//   nncheck::Outcome o = nncheck::Outcome::Mismatch;
//   std::cout << nncheck::outcomeName(o);            // "mismatch"
//   if (nncheck::isFailure(o)) { /* a bug to shrink and save */ }
#pragma once

#include <optional>
#include <string_view>

namespace nncheck {

enum class Outcome {
  Pass,         // ran; for a judged case: the property holds
  Unsupported,  // the engine rejected the model (a limit, not a bug), or the case was no test
  NonFinite,    // the reference computes NaN or Inf: not a test (nncheck/tolerance.h)
  Mismatch,     // outputs differ beyond the tolerance
  Crash,        // the engine's process died on a signal
  Hang,         // the engine ran past its time limit
  Error,        // the engine threw something other than nncheck::Unsupported
};

// "pass", "unsupported", "nonfinite", "mismatch", "crash", "hang", "error": what reports print
// and nncheck.json stores.
std::string_view outcomeName(Outcome o);
// The outcome a name stands for; nullopt for any other text.
std::optional<Outcome> outcomeFromName(std::string_view name);
// Mismatch, Crash, Hang and Error: bugs. Pass, Unsupported and NonFinite are not.
bool isFailure(Outcome o);

}  // namespace nncheck
