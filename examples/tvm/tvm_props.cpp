// TVM 0.27 (Relax) under nncheck, the way a team shipping it would test its CPU pipelines: each
// pipeline matches the reference, each optimizing pipeline agrees with the default build
// pipeline (which only legalizes and lowers), and the corpus of TVM's bugs found so far is
// replayed per pipeline as known failures. TVM runs in its Python worker (src/backends/tvm); this
// suite names it by its registered name, so it needs no header of its own.
//
// Ops with open (known) bugs at a pipeline in the corpus are kept out of that pipeline's
// generated properties, so the suite is green while the known bugs are open and red on anything
// new.
#include <nncheck/engine_suite.h>

namespace {

// The pipelines this suite tests (the worker's facts name them too; `nncheck engines` lists them),
// and what it generates: the float32 ops of the vision models the team deploys (nncheck's
// visionOps), of those TVM's frontend takes (a team with other models lists its own).
const nncheck::EngineSuite kTvm{"tvm",
                                {"pipeline=zero", "pipeline=full", "pipeline=default"},
                                TVM_CORPUS,
                                nncheck::visionOps()};

class Tvm : public nncheck::PropertyTest<std::string> {};

TEST_P(Tvm, MatchesReference) {
  check(kTvm.cases(GetParam()), kTvm.matchesReference(GetParam()), kTvm.make(GetParam())->name(),
        kTvm.triage());
}

TEST_P(Tvm, AgreesWithTheDefaultPipeline) {
  if (GetParam() == kTvm.baseline())
    GTEST_SKIP() << "the default pipeline is what the others agree with";
  auto plain = kTvm.make(kTvm.baseline()), optimized = kTvm.make(GetParam());
  check(
      kTvm.cases(GetParam()),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Pipelines, Tvm, ::testing::ValuesIn(kTvm.configurations),
                         nncheck::EngineSuite::paramName);

// The corpus, once per pipeline: known failures must still fail there, the rest pass.
const bool corpusRegistered = kTvm.registerCorpusTests("TvmCorpus");

}  // namespace
