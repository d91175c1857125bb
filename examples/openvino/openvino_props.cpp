// OpenVINO on CPU under nncheck, the way a team shipping OpenVINO's CPU plugin would test it: each
// mode matches the reference, each performance mode agrees with the accuracy mode, and the corpus
// of the bugs found so far is replayed per mode as known failures. OpenVINO runs in its Python
// worker (src/backends/openvino), reading the ONNX model itself; this suite names it by its
// registered name, so it needs no header of its own.
//
// Ops with open (known) bugs at a mode in the corpus are kept out of that mode's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/engine_suite.h>

namespace {

// The modes this suite tests (the worker's facts name them too; `nncheck engines` lists them), and
// what it generates: the float32 ops of the vision models the team deploys (nncheck's visionOps),
// of those OpenVINO takes (a team with other models lists its own).
const nncheck::EngineSuite kOpenVino{
    "openvino",
    {"mode=accuracy", "mode=performance", "mode=performance-no-snippets"},
    OPENVINO_CORPUS,
    nncheck::visionOps()};

class OpenVino : public nncheck::PropertyTest<std::string> {};

TEST_P(OpenVino, MatchesReference) {
  check(kOpenVino.cases(GetParam()), kOpenVino.matchesReference(GetParam()),
        kOpenVino.make(GetParam())->name(), kOpenVino.triage());
}

TEST_P(OpenVino, AgreesWithTheAccuracyMode) {
  if (GetParam() == kOpenVino.baseline())
    GTEST_SKIP() << "the accuracy mode is what the others agree with";
  auto plain = kOpenVino.make(kOpenVino.baseline()), optimized = kOpenVino.make(GetParam());
  check(
      kOpenVino.cases(GetParam()),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Modes, OpenVino, ::testing::ValuesIn(kOpenVino.configurations),
                         nncheck::EngineSuite::paramName);

// The corpus, once per mode: known failures must still fail there, the rest pass.
const bool corpusRegistered = kOpenVino.registerCorpusTests("OpenVinoCorpus");

}  // namespace
