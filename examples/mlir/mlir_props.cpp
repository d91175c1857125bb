// MLIR's TOSA path under nncheck, the way a compiler team tests its pass pipelines: each
// pipeline matches the reference, each optimizing pipeline agrees with the least optimizing one
// on the same emitted TOSA (a difference is a compiler bug by definition), every pipeline is
// deterministic, and the corpus of divergences found so far is replayed per pipeline.
//
// Ops with open (known) bugs at a pipeline in the corpus are kept out of that pipeline's
// generated properties, so the suite is green while the known bugs are open and red on anything
// new.
#include <nncheck/gtest.h>
#include <nncheck/mlir.h>

#include <memory>
#include <set>

namespace {

using nncheck::mlir::Config;

// The baseline: no fusion, no canonicalization, scf loops, LLVM -O0.
const Config kBaseline = nncheck::mlir::configurations().front();

// The engine's ops less those with known bugs at this pipeline.
nncheck::Capabilities withoutKnownBugs(const nncheck::Backend& engine, const Config& pipeline) {
  nncheck::Capabilities caps = engine.capabilities();
  const std::set<std::string> buggy = nncheck::opsWithKnownFailures(MLIR_CORPUS, pipeline.key());
  std::erase_if(caps.ops, [&](const std::string& op) { return buggy.count(op) > 0; });
  return caps;
}

nncheck::Property matchesReference(Config config) {
  auto engine = std::make_shared<nncheck::mlir::Backend>(config);
  return [engine](const nncheck::TestCase& tc) { nncheck::assertMatchesReference(*engine, tc); };
}

std::vector<std::pair<std::string, nncheck::Property>> triage() {
  std::vector<std::pair<std::string, nncheck::Property>> out;
  for (const Config& c : nncheck::mlir::configurations())
    out.emplace_back(c.key(), matchesReference(c));
  return out;
}

// "fusion_on_canonicalize_on_loops_scf_llvm_O3": GoogleTest names take [A-Za-z0-9_].
std::string testName(const Config& c) {
  std::string name = c.key();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

class Tosa : public nncheck::PropertyTest<Config> {};

TEST_P(Tosa, MatchesReference) {
  nncheck::mlir::Backend engine(GetParam());
  check(nncheck::gen::testCase(withoutKnownBugs(engine, GetParam())), matchesReference(GetParam()),
        engine.name(), triage());
}

TEST_P(Tosa, AgreesWithTheBaselinePipeline) {
  if (GetParam() == kBaseline) GTEST_SKIP() << "the baseline is what the others agree with";
  nncheck::mlir::Backend baseline(kBaseline), optimized(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(optimized, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(baseline, optimized, tc); },
      optimized.name());
}

TEST_P(Tosa, IsDeterministic) {
  nncheck::mlir::Backend engine(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(engine, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertDeterministic(engine, tc); },
      engine.name());
}

INSTANTIATE_TEST_SUITE_P(Pipelines, Tosa, ::testing::ValuesIn(nncheck::mlir::configurations()),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return testName(info.param);
                         });

// The corpus, once per pipeline: known failures must still fail there, the rest pass.
const bool corpusRegistered = [] {
  for (const Config& c : nncheck::mlir::configurations())
    nncheck::registerCorpusTests("TosaCorpus_" + testName(c), MLIR_CORPUS, matchesReference(c),
                                 c.key());
  return true;
}();

}  // namespace
