// PyTorch 2.15's torch.compile under nncheck, the way a team shipping a compiler mode would test
// it on CPU: each mode matches the reference, each compiling mode agrees with eager PyTorch, and
// the corpus of the bugs found so far is replayed per mode as known failures. PyTorch runs in
// its Python worker (src/backends/inductor), on the model translated to PyTorch source; this suite
// names it by its registered name, so it needs no header of its own.
//
// Ops with open (known) bugs at a mode in the corpus are kept out of that mode's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/engine_suite.h>

namespace {

// The modes this suite tests: the default, freezing (which its corpus's bug needs) and eager, the
// baseline (the worker's facts name aot_eager, dynamic and max-autotune too; `nncheck engines`
// lists them; three, for the time a compile takes in CI), and what it generates: the float32 ops of
// the vision models the team deploys (nncheck's visionOps), of those the translation to PyTorch
// takes (a team with other models lists its own).
const nncheck::EngineSuite kInductor{"inductor",
                                     {"mode=inductor", "mode=freezing", "mode=eager"},
                                     INDUCTOR_CORPUS,
                                     nncheck::visionOps()};

class Inductor : public nncheck::PropertyTest<std::string> {};

TEST_P(Inductor, MatchesReference) {
  check(kInductor.cases(GetParam()), kInductor.matchesReference(GetParam()),
        kInductor.make(GetParam())->name(), kInductor.triage());
}

TEST_P(Inductor, AgreesWithEager) {
  if (GetParam() == kInductor.baseline())
    GTEST_SKIP() << "eager is what the compiled modes agree with";
  auto plain = kInductor.make(kInductor.baseline()), optimized = kInductor.make(GetParam());
  check(
      kInductor.cases(GetParam()),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Modes, Inductor, ::testing::ValuesIn(kInductor.configurations),
                         nncheck::EngineSuite::paramName);

// The corpus, once per mode: known failures must still fail there, the rest pass.
const bool corpusRegistered = kInductor.registerCorpusTests("InductorCorpus");

}  // namespace
