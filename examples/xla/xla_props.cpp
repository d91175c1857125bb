// XLA on CPU through JAX under nncheck, the way a team shipping XLA's CPU compiler would test it:
// each mode matches the reference, each compiling mode agrees with JAX op by op, and the corpus
// of the bugs found so far is replayed per mode as known failures. JAX runs in its Python worker
// (src/backends/xla), on the model translated to JAX source; this suite names it by its
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
const std::vector<std::string> kModes = {"mode=jit", "mode=jit-O0", "mode=jit-no-simplify",
                                         "mode=eager"};

std::shared_ptr<nncheck::Backend> xla(const std::string& mode) {
  return nncheck::engines().make("xla", mode);
}

// What this suite generates: the float32 ops of the vision models the team deploys, of those
// the translation to JAX takes (a team with other models lists its own).
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
  const std::set<std::string> buggy = nncheck::opsWithKnownFailures(XLA_CORPUS, mode);
  std::erase_if(caps.ops, [&](const std::string& op) { return buggy.count(op) > 0; });
  return caps;
}

// Made at its first case, for the same reason.
nncheck::Property matchesReference(const std::string& mode) {
  auto engine = std::make_shared<std::shared_ptr<nncheck::Backend>>();
  return [engine, mode](const nncheck::TestCase& tc) {
    if (!*engine) *engine = xla(mode);
    nncheck::assertMatchesReference(**engine, tc);
  };
}

// "jit-O0" as GoogleTest takes a name: jit_O0.
std::string testName(const std::string& mode) {
  std::string name = mode.substr(mode.find('=') + 1);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class Xla : public nncheck::PropertyTest<std::string> {};

TEST_P(Xla, MatchesReference) {
  auto engine = xla(GetParam());
  std::vector<std::pair<std::string, nncheck::Property>> triage;
  for (const std::string& p : kModes) triage.emplace_back(p, matchesReference(p));
  check(nncheck::gen::testCase(withoutKnownBugs(*engine, GetParam())), matchesReference(GetParam()),
        engine->name(), triage);
}

TEST_P(Xla, AgreesWithOpByOp) {
  const std::string baseline = nncheck::engines().at("xla").baseline;
  if (GetParam() == baseline) GTEST_SKIP() << "op by op is what the compiled modes agree with";
  auto plain = xla(baseline), optimized = xla(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(*optimized, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Modes, Xla, ::testing::ValuesIn(kModes),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testName(info.param);
                         });

// The corpus, once per mode: known failures must still fail there, the rest pass.
const bool corpusRegistered = [] {
  for (const std::string& p : kModes)
    nncheck::registerCorpusTests("XlaCorpus_" + testName(p), XLA_CORPUS, matchesReference(p), p);
  return true;
}();

}  // namespace
