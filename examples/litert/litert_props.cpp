// LiteRT on CPU under nncheck, the way a team deploying ONNX models to LiteRT through onnx2tf
// would test it: at each of the interpreter's kernels the converted model matches the reference,
// the optimized kernels agree with the reference kernels on the same converted model, and the
// corpus of the bugs found so far is replayed per configuration as known failures. LiteRT runs in
// its Python worker (src/backends/litert), which converts each model; this suite names it by its
// registered name, so it needs no header of its own.
//
// Ops with open (known) bugs at a configuration in the corpus are kept out of that
// configuration's generated properties, so the suite is green while the known bugs are open and
// red on anything new.
#include <nncheck/engine_suite.h>

namespace {

// The kernels this suite tests, LiteRT's default (XNNPACK) and the reference kernels (the
// worker's facts name the built-in ones too; `nncheck engines` lists them), and what it
// generates: the float32 ops of the vision models the team deploys (nncheck's visionOps), of
// those the conversion and the interpreter take (a team with other models lists its own).
const nncheck::EngineSuite kLiteRt{
    "litert", {"kernels=xnnpack", "kernels=reference"}, LITERT_CORPUS, nncheck::visionOps()};

class LiteRt : public nncheck::PropertyTest<std::string> {};

TEST_P(LiteRt, MatchesReference) {
  check(kLiteRt.cases(GetParam()), kLiteRt.matchesReference(GetParam()),
        kLiteRt.make(GetParam())->name(), kLiteRt.triage());
}

// The interpreter's own property: one converted model, the optimized kernels against the
// reference kernels. A fault of the conversion shows at both and passes here.
TEST_P(LiteRt, AgreesWithTheReferenceKernels) {
  if (GetParam() == kLiteRt.baseline()) GTEST_SKIP() << "what the others agree with";
  auto plain = kLiteRt.make(kLiteRt.baseline()), optimized = kLiteRt.make(GetParam());
  check(
      kLiteRt.cases(GetParam()),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Kernels, LiteRt, ::testing::ValuesIn(kLiteRt.configurations),
                         nncheck::EngineSuite::paramName);

// The corpus, once per configuration: known failures must still fail there, the rest pass.
const bool corpusRegistered = kLiteRt.registerCorpusTests("LiteRtCorpus");

}  // namespace
