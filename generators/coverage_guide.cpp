#include "nncheck/coverage_guide.h"

#include "core/rng.h"
#include "nncheck/error.h"

namespace nncheck {
namespace {

constexpr double kMutationShare = 0.8;  // the rest stay fresh: new ground, not only variations
constexpr size_t kMaxKept = 4096;       // enough for any engine we drive; bounds memory
constexpr size_t kRecent = 64;          // cases remembered for generators run again

}  // namespace

TestCase CoverageGuide::next(const GeneratorConfig& cfg, uint64_t seed) {
  for (const Made& m : recent_)
    if (m.seed == seed && m.nodes == cfg.nodes) return m.testCase;
  TestCase tc = make(cfg, seed);
  recent_.push_back({seed, cfg.nodes, tc});
  if (recent_.size() > kRecent) recent_.pop_front();
  return tc;
}

TestCase CoverageGuide::make(const GeneratorConfig& cfg, uint64_t seed) {
  Rng rng(seed ^ 0xc0fe7a9e5eedull);
  if (!kept_.empty() && rng.chance(kMutationShare)) {
    const TestCase& parent = kept_[rng.index(kept_.size())];
    try {
      TestCase tc = mutateTestCase(cfg, parent, seed);
      ++stats_.mutants;
      return tc;
    } catch (const Error&) {
      // No node fits around this parent under the config: a fresh case instead.
    }
  }
  ++stats_.fresh;
  return makeTestCase(cfg, seed);
}

bool CoverageGuide::observe(const TestCase& tc, const std::vector<uint32_t>& features) {
  int64_t fresh = 0;
  for (uint32_t f : features) {
    if (f >= seen_.size()) seen_.resize(std::max<size_t>(f + size_t{1}, seen_.size() * 2));
    if (seen_[f]) continue;
    seen_[f] = true;
    ++fresh;
  }
  stats_.features += fresh;
  if (fresh == 0) return false;
  if (kept_.size() < kMaxKept) {
    kept_.push_back(tc);
    ++stats_.kept;
  }
  return true;
}

}  // namespace nncheck
