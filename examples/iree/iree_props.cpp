// IREE on CPU under nncheck, the way a team shipping IREE's llvm-cpu path would test it: each
// level matches the reference, each optimizing level agrees with O0, and the corpus of the bugs
// found so far is replayed per level as known failures. IREE runs in its Python worker
// (src/backends/iree), importing the ONNX model itself; this suite names it by its registered
// name, so it needs no header of its own.
//
// Ops with open (known) bugs at a level in the corpus are kept out of that level's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/engine_suite.h>

namespace {

// The levels this suite tests, O0 and O3 (the worker's facts name them all, O3+opt-in too; `nncheck
// engines` lists them; two, for the time a compile takes in CI), and
// what it generates: the float32 ops of the vision models the team deploys (nncheck's visionOps),
// of those IREE takes (a team with other models lists its own).
const nncheck::EngineSuite kIree{"iree", {"opt=O0", "opt=O3"}, IREE_CORPUS, nncheck::visionOps()};

class Iree : public nncheck::PropertyTest<std::string> {};

TEST_P(Iree, MatchesReference) {
  check(kIree.cases(GetParam()), kIree.matchesReference(GetParam()), kIree.make(GetParam())->name(),
        kIree.triage());
}

TEST_P(Iree, AgreesWithO0) {
  if (GetParam() == kIree.baseline()) GTEST_SKIP() << "O0 is what the others agree with";
  auto plain = kIree.make(kIree.baseline()), optimized = kIree.make(GetParam());
  check(
      kIree.cases(GetParam()),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Levels, Iree, ::testing::ValuesIn(kIree.configurations),
                         nncheck::EngineSuite::paramName);

// The corpus, once per level: known failures must still fail there, the rest pass.
const bool corpusRegistered = kIree.registerCorpusTests("IreeCorpus");

}  // namespace
