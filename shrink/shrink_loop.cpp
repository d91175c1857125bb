#include <chrono>

#include "nncheck/shrink.h"

namespace nncheck {

ShrinkResult shrinkGreedily(TestCase tc, const std::function<bool(const TestCase&)>& stillFails,
                            const ShrinkBudget& budget) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto spent = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  ShrinkResult r;
  bool progressed = true;
  while (progressed) {
    progressed = false;
    ShrinkCandidates candidates(tc);
    for (size_t i = 0; i < candidates.size(); ++i) {
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
