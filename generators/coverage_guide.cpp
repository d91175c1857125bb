#include "nncheck/coverage_guide.h"

#include "core/rng.h"
#include "nncheck/error.h"

namespace nncheck {
namespace {

// The rest stay fresh: new ground, not only variations. Half, not more: a mutant costs several
// fresh cases' time (some re-solve the whole graph with z3), and at 80% the fresh cases got a
// twentieth of the time, so patterns blind generation forms in a second took a minute.
constexpr double kMutationShare = 0.5;
constexpr size_t kMaxKept = 4096;      // enough for any engine we drive; bounds memory
constexpr size_t kRecent = 64;         // cases remembered for generators run again
constexpr int64_t kReweighEvery = 64;  // observations between two reweighings of the kept

}  // namespace

TestCase CoverageGuide::next(const GeneratorConfig& cfg, uint64_t seed, int freshNodes) {
  if (freshNodes <= 0) freshNodes = cfg.nodes;
  for (const Made& m : recent_)
    if (m.seed == seed && m.nodes == freshNodes) return m.testCase;
  TestCase tc = make(cfg, seed, freshNodes);
  recent_.push_back({seed, freshNodes, tc});
  if (recent_.size() > kRecent) recent_.pop_front();
  return tc;
}

TestCase CoverageGuide::make(const GeneratorConfig& cfg, uint64_t seed, int freshNodes) {
  Rng rng(seed ^ 0xc0fe7a9e5eedull);
  if (!kept_.empty() && rng.chance(kMutationShare)) {
    if (weights_.size() != kept_.size() || sinceReweigh_ >= kReweighEvery) reweigh();
    const TestCase& parent = kept_[rng.weighted(weights_)].testCase;
    try {
      TestCase tc = mutateTestCase(cfg, parent, seed);
      ++stats_.mutants;
      return tc;
    } catch (const Error&) {
      // No node fits around this parent under the config: a fresh case instead.
    }
  }
  ++stats_.fresh;
  GeneratorConfig fresh = cfg;
  fresh.nodes = freshNodes;
  return makeTestCase(fresh, seed);
}

bool CoverageGuide::observe(const TestCase& tc, const std::vector<uint32_t>& features) {
  int64_t fresh = 0;
  for (uint32_t f : features)
    if (hits_[f]++ == 0) ++fresh;
  ++sinceReweigh_;
  stats_.features += fresh;
  if (fresh == 0) return false;
  if (kept_.size() < kMaxKept) {
    kept_.push_back({tc, features});
    ++stats_.kept;
  }
  return true;
}

// A kept case weighs the sum, over its features, of one over how many cases reached the
// feature: a case is mutated as often as what only it reaches is rare. A Conv that was kept for
// reaching the code of a fusion that looks at Conv's producer gets mutated until the producer
// fits, while the many cases that reached only common code share little weight.
void CoverageGuide::reweigh() {
  weights_.clear();
  for (const Kept& k : kept_) {
    double w = 0;
    for (uint32_t f : k.features) w += 1.0 / static_cast<double>(std::max<uint32_t>(1, hits_[f]));
    weights_.push_back(w > 0 ? w : 1e-9);
  }
  sinceReweigh_ = 0;
}

}  // namespace nncheck
