// OpenVINO on CPU under nncheck, the way a team shipping OpenVINO's CPU plugin would test it: each
// mode matches the reference, each performance mode agrees with the accuracy mode, and the corpus
// of the bugs found so far is replayed per mode as known failures. OpenVINO runs in its Python
// worker (src/backends/openvino), reading the ONNX model itself; this suite names it by its
// registered name, so it needs no header of its own.
//
// Ops with open (known) bugs at a mode in the corpus are kept out of that mode's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/engine.h>
#include <nncheck/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

namespace {

// The modes this suite tests (the worker's facts name them too; `nncheck engines` lists
// them). Named here, not asked of the registry: the corpus tests are registered during static
// initialization, when the engine's own registration may not have run yet.
const std::vector<std::string> kModes = {"mode=accuracy", "mode=performance",
                                         "mode=performance-no-snippets"};

std::shared_ptr<nncheck::Backend> openvino(const std::string& mode) {
  return nncheck::engines().make("openvino", mode);
}

// What this suite generates: the float32 ops of the vision models the team deploys, of those
// OpenVINO takes (a team with other models lists its own).
const std::set<std::string> kOps = {"Add",
                                    "AveragePool",
                                    "BatchNormalization",
                                    "Concat",
                                    "Conv",
                                    "Div",
                                    "Exp",
                                    "Flatten",
                                    "Gemm",
                                    "GlobalAveragePool",
                                    "MatMul",
                                    "MaxPool",
                                    "Mul",
                                    "Relu",
                                    "Reshape",
                                    "Sigmoid",
                                    "Softmax",
                                    "Sub",
                                    "Tanh",
                                    "Transpose"};

nncheck::Capabilities withoutKnownBugs(const nncheck::Backend& engine, const std::string& mode) {
  nncheck::Capabilities caps = engine.capabilities();
  caps.dtypes = {nncheck::DType::Float32};
  std::erase_if(caps.ops, [](const std::string& op) { return kOps.count(op) == 0; });
  const std::set<std::string> buggy = nncheck::opsWithKnownFailures(OPENVINO_CORPUS, mode);
  std::erase_if(caps.ops, [&](const std::string& op) { return buggy.count(op) > 0; });
  return caps;
}

// Made at its first case, for the same reason.
nncheck::Property matchesReference(const std::string& mode) {
  auto engine = std::make_shared<std::shared_ptr<nncheck::Backend>>();
  return [engine, mode](const nncheck::TestCase& tc) {
    if (!*engine) *engine = openvino(mode);
    nncheck::assertMatchesReference(**engine, tc);
  };
}

// "performance-no-snippets" as GoogleTest takes a name: performance_no_snippets.
std::string testName(const std::string& mode) {
  std::string name = mode.substr(mode.find('=') + 1);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class OpenVino : public nncheck::PropertyTest<std::string> {};

TEST_P(OpenVino, MatchesReference) {
  auto engine = openvino(GetParam());
  std::vector<std::pair<std::string, nncheck::Property>> triage;
  for (const std::string& p : kModes) triage.emplace_back(p, matchesReference(p));
  check(nncheck::gen::testCase(withoutKnownBugs(*engine, GetParam())), matchesReference(GetParam()),
        engine->name(), triage);
}

TEST_P(OpenVino, AgreesWithTheAccuracyMode) {
  const std::string baseline = nncheck::engines().at("openvino").baseline;
  if (GetParam() == baseline) GTEST_SKIP() << "the accuracy mode is what the others agree with";
  auto plain = openvino(baseline), optimized = openvino(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(*optimized, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Modes, OpenVino, ::testing::ValuesIn(kModes),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testName(info.param);
                         });

// The corpus, once per mode: known failures must still fail there, the rest pass.
const bool corpusRegistered = [] {
  for (const std::string& p : kModes)
    nncheck::registerCorpusTests("OpenVinoCorpus_" + testName(p), OPENVINO_CORPUS,
                                 matchesReference(p), p);
  return true;
}();

}  // namespace
