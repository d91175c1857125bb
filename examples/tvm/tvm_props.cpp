// TVM 0.27 (Relax) under nncheck, the way a team shipping it would test its CPU pipelines: each
// pipeline matches the reference, each optimizing pipeline agrees with the default build
// pipeline (which only legalizes and lowers), and the corpus of TVM's bugs found so far is
// replayed per pipeline as known failures. TVM runs in its Python worker (src/backends/tvm); this
// suite names it by its registered name, so it needs no header of its own.
//
// Ops with open (known) bugs at a pipeline in the corpus are kept out of that pipeline's
// generated properties, so the suite is green while the known bugs are open and red on anything
// new.
#include <nncheck/engine.h>
#include <nncheck/gtest.h>

#include <memory>
#include <set>

namespace {

// The pipelines this suite tests (the worker's facts name them too; `nncheck engines` lists
// them). Named here, not asked of the registry: the corpus tests are registered during static
// initialization, when the engine's own registration may not have run yet.
const std::vector<std::string> kPipelines = {"pipeline=zero", "pipeline=full", "pipeline=default"};

std::shared_ptr<nncheck::Backend> tvm(const std::string& pipeline) {
  return nncheck::engines().make("tvm", pipeline);
}

// What this suite generates: the float32 ops of the vision models the team deploys, of those
// TVM's frontend takes (a team with other models lists its own).
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

nncheck::Capabilities withoutKnownBugs(const nncheck::Backend& engine,
                                       const std::string& pipeline) {
  nncheck::Capabilities caps = engine.capabilities();
  caps.dtypes = {nncheck::DType::Float32};
  std::erase_if(caps.ops, [](const std::string& op) { return kOps.count(op) == 0; });
  const std::set<std::string> buggy = nncheck::opsWithKnownFailures(TVM_CORPUS, pipeline);
  std::erase_if(caps.ops, [&](const std::string& op) { return buggy.count(op) > 0; });
  return caps;
}

// Made at its first case, for the same reason.
nncheck::Property matchesReference(const std::string& pipeline) {
  auto engine = std::make_shared<std::shared_ptr<nncheck::Backend>>();
  return [engine, pipeline](const nncheck::TestCase& tc) {
    if (!*engine) *engine = tvm(pipeline);
    nncheck::assertMatchesReference(**engine, tc);
  };
}

std::string testName(const std::string& pipeline) {
  return pipeline.substr(pipeline.find('=') + 1);
}

class Tvm : public nncheck::PropertyTest<std::string> {};

TEST_P(Tvm, MatchesReference) {
  auto engine = tvm(GetParam());
  std::vector<std::pair<std::string, nncheck::Property>> triage;
  for (const std::string& p : kPipelines) triage.emplace_back(p, matchesReference(p));
  check(nncheck::gen::testCase(withoutKnownBugs(*engine, GetParam())), matchesReference(GetParam()),
        engine->name(), triage);
}

TEST_P(Tvm, AgreesWithTheDefaultPipeline) {
  const std::string baseline = nncheck::engines().at("tvm").baseline;
  if (GetParam() == baseline) GTEST_SKIP() << "the default pipeline is what the others agree with";
  auto plain = tvm(baseline), optimized = tvm(GetParam());
  check(
      nncheck::gen::testCase(withoutKnownBugs(*optimized, GetParam())),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(*plain, *optimized, tc); },
      optimized->name());
}

INSTANTIATE_TEST_SUITE_P(Pipelines, Tvm, ::testing::ValuesIn(kPipelines),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testName(info.param);
                         });

// The corpus, once per pipeline: known failures must still fail there, the rest pass.
const bool corpusRegistered = [] {
  for (const std::string& p : kPipelines)
    nncheck::registerCorpusTests("TvmCorpus_" + testName(p), TVM_CORPUS, matchesReference(p), p);
  return true;
}();

}  // namespace
