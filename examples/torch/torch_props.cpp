// PyTorch's TorchScript under nncheck, the way a compiler team tests its optimizer: each level
// matches the reference, each optimizing level agrees with eager (the optimized-vs-unoptimized
// property in its purest form), every level is deterministic, and the corpus of divergences
// found so far is replayed per level.
//
// Ops with open (known) bugs at a level in the corpus are kept out of that level's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/gtest.h>
#include <nncheck/torchscript.h>

#include <memory>
#include <set>

namespace {

using nncheck::torchscript::Config;
using nncheck::torchscript::Level;

// The engine's ops less those with known bugs at this level (NNC's bugs keep their ops out of
// NNC's properties only).
nncheck::Capabilities withoutKnownBugs(const nncheck::Backend& engine, const Config& level) {
  nncheck::Capabilities caps = engine.capabilities();
  const std::set<std::string> buggy = nncheck::opsWithKnownFailures(TORCH_CORPUS, level.key());
  std::erase_if(caps.ops, [&](const std::string& op) { return buggy.count(op) > 0; });
  return caps;
}

nncheck::Property matchesReference(Config config) {
  auto engine = std::make_shared<nncheck::torchscript::Backend>(config);
  return [engine](const nncheck::TestCase& tc) { nncheck::assertMatchesReference(*engine, tc); };
}

std::vector<std::pair<std::string, nncheck::Property>> triage() {
  std::vector<std::pair<std::string, nncheck::Property>> out;
  for (const Config& c : nncheck::torchscript::configurations())
    out.emplace_back(c.key(), matchesReference(c));
  return out;
}

std::string testName(const Config& c) { return c.describe(); }

class TorchScript : public nncheck::PropertyTest<Config> {};

TEST_P(TorchScript, MatchesReference) {
  nncheck::torchscript::Backend engine(GetParam());
  check(nncheck::gen::testCase(withoutKnownBugs(engine, GetParam())), matchesReference(GetParam()),
        engine.name(), triage());
}

TEST_P(TorchScript, AgreesWithEager) {
  if (GetParam().level == Level::Eager) GTEST_SKIP() << "eager is what the others agree with";
  nncheck::torchscript::Backend eager({.level = Level::Eager}), optimized(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(optimized, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(eager, optimized, tc); },
      optimized.name());
}

TEST_P(TorchScript, IsDeterministic) {
  nncheck::torchscript::Backend engine(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(engine, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertDeterministic(engine, tc); },
      engine.name());
}

INSTANTIATE_TEST_SUITE_P(Levels, TorchScript,
                         ::testing::ValuesIn(nncheck::torchscript::configurations()),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return testName(info.param);
                         });

// The corpus, once per level: known failures must still fail there, the rest pass.
const bool corpusRegistered = [] {
  for (const Config& c : nncheck::torchscript::configurations())
    nncheck::registerCorpusTests("TorchScriptCorpus_" + testName(c), TORCH_CORPUS,
                                 matchesReference(c), c.key());
  return true;
}();

}  // namespace
