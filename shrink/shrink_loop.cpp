#include <chrono>

#include "nncheck/shrink.h"

namespace nncheck {

ShrinkResult shrinkGreedily(TestCase tc, const std::function<bool(const TestCase&)>& stillFails,
                            const ShrinkBudget& budget, std::optional<size_t> focus) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto spent = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  ShrinkResult r;
  if (focus && budget.steps > 0 && spent() <= budget.seconds)
    if (std::optional<TestCase> alone = ShrinkCandidates(tc).alone(*focus)) {
      ++r.steps;
      if (stillFails(*alone)) tc = std::move(*alone);
    }
  bool progressed = true;
  // Each pass starts where the last candidate taken was, not at the first: those before it were
  // just refused, and most stay refused on the smaller case (each such run is a compile on a
  // compiler). A pass that takes none has tried them all: the case is as small as it gets.
  size_t from = 0;
  while (progressed) {
    progressed = false;
    ShrinkCandidates candidates(tc);
    for (size_t k = 0; k < candidates.size(); ++k) {
      const size_t i = (from + k) % candidates.size();
      if (r.steps >= budget.steps || spent() > budget.seconds) {
        r.testCase = std::move(tc);
        r.seconds = spent();
        return r;
      }
      std::optional<TestCase> smaller = candidates.make(i);
      if (!smaller) continue;
      ++r.steps;
      if (stillFails(*smaller)) {
        tc = std::move(*smaller);
        from = i;
        progressed = true;
        break;
      }
    }
  }
  r.testCase = std::move(tc);
  r.seconds = spent();
  return r;
}

}  // namespace nncheck
