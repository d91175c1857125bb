// RapidCheck generators of test cases whose shrinking works over the graph.
//
//   rc::check([](const nncheck::TestCase& tc) { ... });       // with the Arbitrary below, or:
//   auto g = nncheck::gen::testCase(cfg);                       // rc::Gen<nncheck::TestCase>
//   RC_GTEST_PROP(MyEngine, MatchesReference, ()) { auto tc = *g; ... }
//
// The model's size follows RapidCheck's size (nodes = 1 + size * (cfg.nodes - 1) / 100; a
// coverage-guided mutant's follows its parent's, up to twice cfg.nodes), the
// seed comes from RapidCheck's random stream, and each value's shrinks are the candidates of
// nncheck::ShrinkCandidates, produced lazily, largest cuts first. Inside nncheck::check(), the
// cases are coverage-guided when the engine is compiled with SanitizerCoverage
// (nncheck/coverage_guide.h).
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <ostream>

#include "nncheck/coverage_guide.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/shrink.h"

namespace nncheck {

// RapidCheck prints counterexamples with this.
inline void showValue(const TestCase& tc, std::ostream& os) {
  os << "seed " << tc.seed << "\n" << modelToText(tc.model);
}

namespace detail {
// The config of the last case a gen::testCase generator made on this thread: check() reports
// which of its usable ops the cases reached.
inline thread_local std::shared_ptr<const GeneratorConfig> lastGeneratorConfig;
// The coverage guide of the check() running on this thread, if any: gen::testCase draws its
// cases from it, so that they are mutants of cases that reached new edges of the engine.
inline thread_local CoverageGuide* activeGuide = nullptr;
}  // namespace detail

namespace gen {

// The valid, strictly simpler cases RapidCheck may try after tc fails.
inline rc::Seq<TestCase> shrinks(const TestCase& tc) {
  auto c = std::make_shared<ShrinkCandidates>(tc);
  auto candidates =
      rc::seq::map(rc::seq::range<size_t>(0, c->size()), [c](size_t i) { return c->make(i); });
  auto valid = rc::seq::filter(std::move(candidates),
                               [](const std::optional<TestCase>& t) { return t.has_value(); });
  return rc::seq::map(std::move(valid), [](std::optional<TestCase>&& t) { return std::move(*t); });
}

// NNCHECK_MAX_NODES, when set; throws nncheck::Error naming it when it is no positive integer.
std::optional<int> maxNodesOverride();

// Test cases of up to cfg.nodes nodes (NNCHECK_MAX_NODES, when set, overrides it); throws
// nncheck::Error for a bad config.
inline rc::Gen<TestCase> testCase(GeneratorConfig cfg) {
  if (const std::optional<int> max = maxNodesOverride()) cfg.nodes = *max;
  validateConfig(cfg);
  auto shared = std::make_shared<const GeneratorConfig>(std::move(cfg));
  return rc::Gen<TestCase>([shared](const rc::Random& random, int size) {
    const GeneratorConfig& cfg = *shared;
    detail::lastGeneratorConfig = shared;
    rc::Random r(random);
    const uint64_t seed = r.next();
    GeneratorConfig c = cfg;
    c.nodes = std::clamp(1 + std::max(size, 0) * (cfg.nodes - 1) / 100, 1, cfg.nodes);
    TestCase tc =
        detail::activeGuide ? detail::activeGuide->next(cfg, seed, c.nodes) : makeTestCase(c, seed);
    return rc::shrinkable::shrinkRecur(std::move(tc), &shrinks);
  });
}

// Test cases an engine accepts.
inline rc::Gen<TestCase> testCase(const Capabilities& caps, int nodes = 10) {
  return testCase(configFor(caps, nodes));
}

}  // namespace gen
}  // namespace nncheck
