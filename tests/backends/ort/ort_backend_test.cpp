// The ONNX Runtime engine against the real ORT 1.30 from the npm registry, in its Node.js worker.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <iterator>

#include "cli/cli_runner.h"
#include "core/rng.h"
#include "nncheck/corpus.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/isolation.h"
#include "nncheck/ort.h"
#include "nncheck/property.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "ort/ort_rules.h"
#include "test_util.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

Tensor randomTensor(Rng& rng, Shape s) {
  Tensor t(DType::Float32, std::move(s));
  for (float& v : t.span<float>()) v = static_cast<float>(rng.real(-1, 1));
  return t;
}

// a[2,3] -> MatMul(w[3,4]) -> Add(b[4]) -> Relu: what ORT fuses at `all` (MatMulAddFusion, then
// GemmActivationFusion) and leaves alone at `disabled`.
TestCase matMulAddRelu() {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 17}};
  m.graph.name = "matmul_add_relu";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {2, 3})};
  Rng rng(3);
  m.graph.initializers = {{"w", randomTensor(rng, {3, 4}), ""}, {"b", randomTensor(rng, {4}), ""}};
  m.graph.nodes = {Node::make("MatMul", {"a", "w"}, {"p"}, "matmul"),
                   Node::make("Add", {"p", "b"}, {"s"}, "add"),
                   Node::make("Relu", {"s"}, {"y"}, "relu")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 4})};
  tc.inputs["a"] = randomTensor(rng, {2, 3});
  return tc;
}

// Neg(Dropout(x, Abs(r))): Dropout-13 in inference, reading a ratio that a node computes, is the
// identity on its data, so y = -x.
TestCase dropoutOfAComputedRatio() {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 17}};
  m.graph.name = "dropout";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {3}),
                    ValueInfo::tensor("r", DType::Float32, {})};
  m.graph.nodes = {Node::make("Abs", {"r"}, {"ratio"}, "abs"),
                   Node::make("Dropout", {"x", "ratio"}, {"d"}, "dropout"),
                   Node::make("Neg", {"d"}, {"y"}, "neg")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {3})};
  tc.inputs["x"] = Tensor::fromVector<float>({3}, {1, -2, 3});
  tc.inputs["r"] = Tensor::fromVector<float>({}, {0.25f});
  return tc;
}

TEST(OrtConfig, ReadsWhatItWritesAndNamesWhatIsWrong) {
  EXPECT_EQ(ort::Config::parse("").key(), "level=all,threads=1");
  const ort::Config c = ort::Config::parse("disable=B+A,level=basic,threads=2");
  EXPECT_EQ(c.key(), "level=basic,threads=2,disable=A+B");
  EXPECT_EQ(ort::Config::parse(c.key()), c);
  EXPECT_EQ(c.describe(), "basic, 2 threads, without A, B");
  for (const char* bad : {"level=max", "threads=0", "threads=x", "threads=1000",
                          "disable=", "disable=A;B", "fusion=on"}) {
    try {
      ort::Config::parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(engines().configurations("ort"),
            (std::vector<std::string>{"level=disabled,threads=1", "level=basic,threads=1",
                                      "level=extended,threads=1", "level=all,threads=1"}));
  EXPECT_EQ(engines().at("ort").baseline, "level=disabled,threads=1");
}

TEST(OrtBackend, MatchesTheReferenceAtEveryLevelAndNamesTheFusionsThatFired) {
  const TestCase tc = matMulAddRelu();
  ASSERT_EQ(whyInvalid(tc.model), std::nullopt);
  const TensorMap want = runOn(reference(), tc);
  for (const ort::Config& c : ort::configurations()) {
    ort::Backend engine(c);
    EXPECT_NO_THROW(assertAllClose(runOn(engine, tc), want)) << engine.name();
    const std::vector<std::string> fired = engine.optimizationsApplied();
    const bool fused = std::count(fired.begin(), fired.end(), "MatMulAddFusion") > 0;
    EXPECT_EQ(fused, c.level >= ort::Level::Basic) << engine.name();
    for (const std::string& name : fired) {
      const std::vector<std::string> all = engine.optimizations();
      EXPECT_TRUE(std::binary_search(all.begin(), all.end(), name))
          << name << " fired at " << engine.name() << " but is not in its optimizations()";
    }
  }
  ort::Backend without({.level = ort::Level::All, .disabled = {"MatMulAddFusion"}});
  EXPECT_NO_THROW(assertAllClose(runOn(without, tc), want));
  const std::vector<std::string> fired = without.optimizationsApplied();
  EXPECT_EQ(std::count(fired.begin(), fired.end(), "MatMulAddFusion"), 0);
  const std::vector<std::string> all = without.optimizations();
  EXPECT_FALSE(std::binary_search(all.begin(), all.end(), "MatMulAddFusion"));
}

TEST(OrtBackend, OptimizationTableMatchesAFreshSession) {
  // ort_optimizations.inc lists, per level, the transformers ORT 1.30 runs; the log of a fresh
  // session at each level must name exactly those.
  const TestCase tc = matMulAddRelu();
  for (const ort::Config& c : ort::configurations()) {
    ort::Backend engine(c);
    runOn(engine, tc);
    std::vector<std::string> transformers;
    const std::vector<std::string> rules = ort::rewriteRules(c);
    std::ranges::set_difference(engine.optimizations(), rules, std::back_inserter(transformers));
    EXPECT_EQ(engine.transformersRun(), transformers)
        << "at " << engine.name() << ": rebuild src/backends/ort/ort_optimizations.inc";
  }
}

// The rules inside the rule-based transformers are not in ORT's log; the engine tells which fired
// from the model of a session that runs those transformers alone.
TEST(OrtBackend, NamesTheRewriteRulesThatFired) {
  TestCase dropout = dropoutOfAComputedRatio();
  // Neg(Dropout(x)) with the default ratio: EliminateDropout takes the Dropout out.
  dropout.model.graph.nodes = {Node::make("Dropout", {"x"}, {"d"}, "dropout"),
                               Node::make("Neg", {"d"}, {"y"}, "neg")};
  dropout.model.graph.inputs.pop_back();
  dropout.inputs.erase("r");
  // x[1,1,3,3] -> Conv(w[1,1,1,1]) -> Add(b[1,1,1,1]): ConvAddFusion folds b into the bias.
  TestCase convAdd;
  Model& m = convAdd.model;
  m.opsets = {{"", 17}};
  m.graph.name = "conv_add";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 1, 3, 3})};
  Rng rng(5);
  m.graph.initializers = {{"w", randomTensor(rng, {1, 1, 1, 1}), ""},
                          {"b", randomTensor(rng, {1, 1, 1, 1}), ""}};
  m.graph.nodes = {Node::make("Conv", {"x", "w"}, {"c"}, "conv"),
                   Node::make("Add", {"c", "b"}, {"y"}, "add")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 1, 3, 3})};
  convAdd.inputs["x"] = randomTensor(rng, {1, 1, 3, 3});
  for (const auto& [tc, rule] :
       {std::pair{dropout, "EliminateDropout"}, {convAdd, "ConvAddFusion"}}) {
    ASSERT_EQ(whyInvalid(tc.model), std::nullopt) << rule;
    for (const ort::Config& c : ort::configurations()) {
      ort::Backend engine(c);
      EXPECT_NO_THROW(assertAllClose(runOn(engine, tc), runOn(reference(), tc))) << rule;
      const std::vector<std::string> fired = engine.optimizationsApplied();
      EXPECT_EQ(std::count(fired.begin(), fired.end(), rule), c.level >= ort::Level::Basic ? 1 : 0)
          << rule << " at " << engine.name();
      EXPECT_EQ(std::count(fired.begin(), fired.end(), "NoopElimination"), 0)
          << "the Add after a Conv is ConvAddFusion's, at " << engine.name();
    }
    ort::Backend without({.level = ort::Level::All, .disabled = {rule}});
    runOn(without, tc);
    const std::vector<std::string> fired = without.optimizationsApplied();
    EXPECT_EQ(std::count(fired.begin(), fired.end(), rule), 0) << rule << " disabled";
  }
}

TEST(OrtBackend, RunsIsolatedAndSendsWhatFiredBack) {
  ort::Backend engine;
  const TestCase tc = matMulAddRelu();
  const RunOutcome r = isolated(engine, 30s).run(tc.model, tc.inputs);
  ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
  EXPECT_NE(std::find(r.optimizations.begin(), r.optimizations.end(), "MatMulAddFusion"),
            r.optimizations.end());
  EXPECT_FALSE(r.coverage.empty()) << "each optimization that fired is a coverage feature";
  EXPECT_NO_THROW(assertAllClose(r.outputs, runOn(reference(), tc)));
}

TEST(OrtBackend, AnOpWithoutAKernelIsUnsupportedNamingIt) {
  // Relu-14 has no int64 kernel in ORT's CPU provider.
  TestCase tc;
  tc.model.opsets = {{"", 17}};
  tc.model.graph.name = "relu";
  tc.model.graph.inputs = {ValueInfo::tensor("x", DType::Int64, {2})};
  tc.model.graph.nodes = {Node::make("Relu", {"x"}, {"y"}, "relu")};
  tc.model.graph.outputs = {ValueInfo::tensor("y", DType::Int64, {2})};
  tc.inputs["x"] = Tensor::fromVector<int64_t>({2}, {-1, 2});
  ASSERT_EQ(whyInvalid(tc.model), std::nullopt);
  ort::Backend engine;
  try {
    runOn(engine, tc);
    FAIL() << "ORT ran Relu on int64";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("Relu"), std::string::npos) << e.what();
  }
}

TEST(OrtBackend, WithoutNodeOrThePackageTheErrorSaysWhatToInstall) {
  const TestCase tc = matMulAddRelu();
  {
    ::setenv("NNCHECK_NODE", "/nonexistent/node", 1);
    ort::Backend engine;
    try {
      runOn(engine, tc);
      ADD_FAILURE() << "ran without Node.js";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot run /nonexistent/node"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("install what it needs with scripts/install-deps.sh"),
                std::string::npos)
          << e.what();
    }
    ::unsetenv("NNCHECK_NODE");
  }
  {
    ::setenv("NNCHECK_ORT_NODE_MODULES", "/nonexistent/modules", 1);
    ort::Backend engine;
    try {
      runOn(engine, tc);
      ADD_FAILURE() << "ran without onnxruntime-node";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("onnxruntime-node"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("/nonexistent/modules"), std::string::npos) << e.what();
    }
    ::unsetenv("NNCHECK_ORT_NODE_MODULES");
  }
}

TEST(OrtBackend, EliminateDropoutMakesItsReaderReadAComputedRatio) {
  // A real ORT 1.30 bug nncheck found (examples/ort/corpus): with the basic level's rule
  // EliminateDropout on, the reader of a Dropout whose ratio a node computes reads the ratio
  // (y = -0.25, a scalar); with the rule off, or at level disabled, it reads the data, as the
  // spec says. This test pins the bug; it fails when ORT fixes it.
  const TestCase tc = dropoutOfAComputedRatio();
  ASSERT_EQ(whyInvalid(tc.model), std::nullopt);
  const TensorMap want = runOn(reference(), tc);
  ort::Backend plain({.level = ort::Level::Disabled});
  EXPECT_NO_THROW(assertAllClose(runOn(plain, tc), want));
  ort::Backend basic({.level = ort::Level::Basic});
  const Tensor wrong = runOn(basic, tc).at("y");
  EXPECT_EQ(wrong.shape(), Shape{});
  EXPECT_EQ(wrong.toDouble(0), -0.25);
  ort::Backend withoutTheRule({.level = ort::Level::Basic, .disabled = {"EliminateDropout"}});
  EXPECT_NO_THROW(assertAllClose(runOn(withoutTheRule, tc), want));
  // Several names are switched off together (ORT reads them separated by ';').
  ort::Backend withoutTwo(
      {.level = ort::Level::Basic, .disabled = {"ConstantFolding", "EliminateDropout"}});
  EXPECT_NO_THROW(assertAllClose(runOn(withoutTwo, tc), want));
}

TEST(OrtBackend, ReduceNamesTheCulpritAndTheWorkaroundOfTheCorpusBug) {
  // The culprit search over the basic level's transformers and rules, through the command line
  // and nncheck.json: the rule and the transformer that runs it.
  testing::TempDir tmp("culprit");
  const auto o = testing::runCli("reduce " NNCHECK_SOURCE_DIR
                                 "/examples/ort/corpus/f105958592a43046 --backend ort --config "
                                 "level=basic --corpus " +
                                 tmp.path().string());
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("culprit: fails with only EliminateDropout and "
                          "Level1_RuleBasedTransformer enabled; passes with them disabled"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("workaround: --config "
                          "level=basic,threads=1,disable=EliminateDropout+Level1_"
                          "RuleBasedTransformer"),
            std::string::npos)
      << o.output;
  const std::vector<CorpusCase> saved = loadCorpus(tmp.path());
  ASSERT_EQ(saved.size(), 1u);
  ASSERT_TRUE(saved[0].culprit);
  EXPECT_EQ(saved[0].culprit->needed,
            (std::vector<std::string>{"EliminateDropout", "Level1_RuleBasedTransformer"}));
}

}  // namespace
}  // namespace nncheck
