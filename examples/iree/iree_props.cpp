// IREE on CPU under nncheck, the way a team shipping IREE's llvm-cpu path would test it: each
// level matches the reference, each optimizing level agrees with O0, and the corpus of the bugs
// found so far is replayed per level as known failures. IREE runs in its Python worker
// (src/backends/iree), importing the ONNX model itself; this suite names it by its registered
// name, so it needs no header of its own.
//
// Ops with open (known) bugs at a level in the corpus are kept out of that level's generated
// properties, so the suite is green while the known bugs are open and red on anything new.
#include <nncheck/engine.h>
#include <nncheck/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

namespace {

// The levels this suite tests (the worker's facts name them all; `nncheck engines` lists
// them). Named here, not asked of the registry: the corpus tests are registered during static
// initialization, when the engine's own registration may not have run yet.
const std::vector<std::string> kLevels = {"opt=O0", "opt=O3", "opt=O3+opt-in"};

std::shared_ptr<nncheck::Backend> iree(const std::string& level) {
  return nncheck::engines().make("iree", level);
}

// What this suite generates: the float32 ops of the vision models the team deploys, of those
// IREE takes (a team with other models lists its own).
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

nncheck::Capabilities withoutKnownBugs(const nncheck::Backend& engine, const std::string& level) {
  nncheck::Capabilities caps = engine.capabilities();
  caps.dtypes = {nncheck::DType::Float32};
  std::erase_if(caps.ops, [](const std::string& op) { return kOps.count(op) == 0; });
  const std::set<std::string> buggy = nncheck::opsWithKnownFailures(IREE_CORPUS, level);
  std::erase_if(caps.ops, [&](const std::string& op) { return buggy.count(op) > 0; });
  return caps;
}

// Made at its first case, for the same reason.
nncheck::Property matchesReference(const std::string& level) {
  auto engine = std::make_shared<std::shared_ptr<nncheck::Backend>>();
  return [engine, level](const nncheck::TestCase& tc) {
    if (!*engine) *engine = iree(level);
    nncheck::assertMatchesReference(**engine, tc);
  };
}

// "opt=O3+opt-in" as GoogleTest takes a name: O3_opt_in.
std::string testName(const std::string& level) {
  std::string name = level.substr(level.find('=') + 1);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == '+' || c == '-'; }, '_');
  return name;
}

class Iree : public nncheck::PropertyTest<std::string> {};

TEST_P(Iree, MatchesReference) {
  auto engine = iree(GetParam());
  std::vector<std::pair<std::string, nncheck::Property>> triage;
  for (const std::string& l : kLevels) triage.emplace_back(l, matchesReference(l));
  check(nncheck::gen::testCase(withoutKnownBugs(*engine, GetParam())), matchesReference(GetParam()),
        engine->name(), triage);
}

TEST_P(Iree, AgreesWithO0) {
  const std::string baseline = nncheck::engines().at("iree").baseline;
  if (GetParam() == baseline) GTEST_SKIP() << "O0 is what the others agree with";
  auto plain = iree(baseline), optimized = iree(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(*optimized, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Levels, Iree, ::testing::ValuesIn(kLevels),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testName(info.param);
                         });

// The corpus, once per level: known failures must still fail there, the rest pass.
const bool corpusRegistered = [] {
  for (const std::string& l : kLevels)
    nncheck::registerCorpusTests("IreeCorpus_" + testName(l), IREE_CORPUS, matchesReference(l), l);
  return true;
}();

}  // namespace
