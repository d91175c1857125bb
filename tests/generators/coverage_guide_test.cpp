// The coverage guide: fresh cases until coverage comes, then mostly mutants of the cases that
// reached new features; deterministic; the same case again for a recent seed.
#include "nncheck/coverage_guide.h"

#include <gtest/gtest.h>

#include <set>

#include "nncheck/onnx_io.h"
#include "nncheck/validity.h"

namespace nncheck {
namespace {

GeneratorConfig sixNodes() {
  GeneratorConfig cfg;
  cfg.nodes = 6;
  return cfg;
}

// A stand-in for an engine's coverage: one feature per op type in the case.
std::vector<uint32_t> opFeatures(const TestCase& tc) {
  std::vector<uint32_t> f;
  for (const Node& n : tc.model.graph.nodes)
    f.push_back(static_cast<uint32_t>(std::hash<std::string>{}(n.opType) % 100000));
  std::sort(f.begin(), f.end());
  f.erase(std::unique(f.begin(), f.end()), f.end());
  return f;
}

TEST(CoverageGuide, WithoutCoverageEveryCaseIsFreshAsMakeTestCase) {
  CoverageGuide guide;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const TestCase tc = guide.next(sixNodes(), seed);
    EXPECT_EQ(serializeModel(tc.model), serializeModel(makeTestCase(sixNodes(), seed).model));
    EXPECT_FALSE(guide.observe(tc, {}));
  }
  EXPECT_EQ(guide.stats().fresh, 20);
  EXPECT_EQ(guide.stats().mutants, 0);
  EXPECT_FALSE(guide.guiding());
}

TEST(CoverageGuide, KeepsWhatReachesNewFeaturesAndMutatesItDeterministically) {
  CoverageGuide a, b;
  int kept = 0;
  TestCase last;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const TestCase ta = a.next(sixNodes(), seed), tb = b.next(sixNodes(), seed);
    last = ta;
    ASSERT_EQ(serializeModel(ta.model), serializeModel(tb.model)) << "seed " << seed;
    if (auto why = whyInvalid(ta.model)) FAIL() << "seed " << seed << ": " << *why;
    const bool isNew = a.observe(ta, opFeatures(ta));
    EXPECT_EQ(b.observe(tb, opFeatures(tb)), isNew);
    kept += isNew;
  }
  EXPECT_EQ(a.stats().kept, kept);
  EXPECT_GT(kept, 5);
  EXPECT_GT(a.stats().mutants, 100);  // half once something is kept
  EXPECT_TRUE(a.guiding());
  // Features seen once are not new again.
  EXPECT_FALSE(a.observe(last, opFeatures(last)));
}

// How many op types of `a` (as a multiset) `b` shares.
size_t sharedOps(const TestCase& a, const TestCase& b) {
  std::multiset<std::string> x, y;
  for (const Node& n : a.model.graph.nodes) x.insert(n.opType);
  for (const Node& n : b.model.graph.nodes) y.insert(n.opType);
  std::vector<std::string> common;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(common));
  return common.size();
}

TEST(CoverageGuide, MutatesMostTheCasesThatReachWhatFewCasesReach) {
  // A reached features every later case reaches too; B reached one nobody else has: B is the
  // parent of most mutants. (Chosen uniformly, each would parent about half; fresh cases, the
  // other half of the cases, resemble either at random.)
  CoverageGuide guide;
  const TestCase a = makeTestCase(sixNodes(), 11), b = makeTestCase(sixNodes(), 12);
  ASSERT_TRUE(guide.observe(a, {1, 2, 3}));
  for (int i = 0; i < 300; ++i) guide.observe(a, {1, 2, 3});
  ASSERT_TRUE(guide.observe(b, {4}));
  int fromA = 0, fromB = 0;
  for (uint64_t seed = 100; seed < 200; ++seed) {
    const TestCase m = guide.next(sixNodes(), seed);
    const size_t sa = sharedOps(m, a), sb = sharedOps(m, b);
    fromA += sa > sb;
    fromB += sb > sa;
  }
  EXPECT_GT(fromB, 2 * fromA) << "from A " << fromA << ", from B " << fromB;
}

TEST(CoverageGuide, ARecentSeedGivesTheSameCaseAgain) {
  // RapidCheck runs a generator again to shrink what it made: before, the guide then made a
  // different mutant, whose shrinks passed, and guided failures were left unshrunk.
  CoverageGuide guide;
  const TestCase first = guide.next(sixNodes(), 1);
  guide.observe(first, opFeatures(first));
  const TestCase second = guide.next(sixNodes(), 2);
  guide.observe(second, {12345678});
  EXPECT_EQ(serializeModel(guide.next(sixNodes(), 2).model), serializeModel(second.model));
  EXPECT_EQ(serializeModel(guide.next(sixNodes(), 1).model), serializeModel(first.model));
}

}  // namespace
}  // namespace nncheck
