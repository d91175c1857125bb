// ONNX Runtime under nncheck, the way a team shipping it tests its graph optimizer: each level
// matches the reference, each optimizing level agrees with `disabled` (the optimized-vs-
// unoptimized property in its purest form), every level is deterministic, and the corpus of
// divergences found so far is replayed per level.
//
// Ops with open (known) bugs at a level in the corpus are kept out of that level's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/gtest.h>
#include <nncheck/ort.h>

#include <memory>
#include <set>

namespace {

using nncheck::ort::Config;
using nncheck::ort::Level;

nncheck::Capabilities withoutKnownBugs(const nncheck::Backend& engine, const Config& level) {
  nncheck::Capabilities caps = engine.capabilities();
  const std::set<std::string> buggy = nncheck::opsWithKnownFailures(ORT_CORPUS, level.key());
  std::erase_if(caps.ops, [&](const std::string& op) { return buggy.count(op) > 0; });
  return caps;
}

nncheck::Property matchesReference(Config config) {
  auto engine = std::make_shared<nncheck::ort::Backend>(config);
  return [engine](const nncheck::TestCase& tc) { nncheck::assertMatchesReference(*engine, tc); };
}

std::vector<std::pair<std::string, nncheck::Property>> triage() {
  std::vector<std::pair<std::string, nncheck::Property>> out;
  for (const Config& c : nncheck::ort::configurations())
    out.emplace_back(c.key(), matchesReference(c));
  return out;
}

std::string testName(const Config& c) { return c.describe(); }

class Ort : public nncheck::PropertyTest<Config> {};

TEST_P(Ort, MatchesReference) {
  nncheck::ort::Backend engine(GetParam());
  check(nncheck::gen::testCase(withoutKnownBugs(engine, GetParam())), matchesReference(GetParam()),
        engine.name(), triage());
}

TEST_P(Ort, AgreesWithDisabled) {
  if (GetParam().level == Level::Disabled) GTEST_SKIP() << "disabled is what the others agree with";
  nncheck::ort::Backend plain({.level = Level::Disabled}), optimized(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(optimized, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(plain, optimized, tc); },
      optimized.name());
}

TEST_P(Ort, IsDeterministic) {
  nncheck::ort::Backend engine(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(engine, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertDeterministic(engine, tc); },
      engine.name());
}

INSTANTIATE_TEST_SUITE_P(Levels, Ort, ::testing::ValuesIn(nncheck::ort::configurations()),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return testName(info.param);
                         });

// The corpus, once per level: known failures must still fail there, the rest pass.
const bool corpusRegistered = [] {
  for (const Config& c : nncheck::ort::configurations())
    nncheck::registerCorpusTests("OrtCorpus_" + testName(c), ORT_CORPUS, matchesReference(c),
                                 c.key());
  return true;
}();

}  // namespace
