// XLA on CPU through JAX under nncheck, the way a team shipping XLA's CPU compiler would test it:
// each mode matches the reference, each compiling mode agrees with JAX op by op, and the corpus
// of the bugs found so far is replayed per mode as known failures. JAX runs in its Python worker
// (src/backends/xla), on the model translated to JAX source; this suite names it by its
// registered name, so it needs no header of its own.
//
// Ops with open (known) bugs at a mode in the corpus are kept out of that mode's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/engine_suite.h>

namespace {

// The modes this suite tests (the worker's facts name them too; `nncheck engines` lists them), and
// what it generates: the float32 ops of the vision models the team deploys (nncheck's visionOps),
// of those the translation to JAX takes (a team with other models lists its own).
const nncheck::EngineSuite kXla{"xla",
                                {"mode=jit", "mode=jit-O0", "mode=jit-no-simplify", "mode=eager"},
                                XLA_CORPUS,
                                nncheck::visionOps()};

class Xla : public nncheck::PropertyTest<std::string> {};

TEST_P(Xla, MatchesReference) {
  check(kXla.cases(GetParam()), kXla.matchesReference(GetParam()), kXla.make(GetParam())->name(),
        kXla.triage());
}

TEST_P(Xla, AgreesWithOpByOp) {
  if (GetParam() == kXla.baseline())
    GTEST_SKIP() << "op by op is what the compiled modes agree with";
  auto plain = kXla.make(kXla.baseline()), optimized = kXla.make(GetParam());
  check(
      kXla.cases(GetParam()),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Modes, Xla, ::testing::ValuesIn(kXla.configurations),
                         nncheck::EngineSuite::paramName);

// The corpus, once per mode: known failures must still fail there, the rest pass.
const bool corpusRegistered = kXla.registerCorpusTests("XlaCorpus");

}  // namespace
