// Campaigns against deliberately buggy engines: the bug is found, shrunk to its pattern,
// localized, triaged, saved once; rejected ops lose weight; the same seed gives the same run.
#include "nncheck/campaign.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "core/files.h"
#include "doubles.h"
#include "doubles/optimizer.h"
#include "harness/corpus_store.h"
#include "harness/corpus_tools.h"
#include "harness/root_cause.h"
#include "nncheck/onnx_io.h"
#include "nncheck/oracle.h"
#include "nncheck/reference.h"
#include "nncheck/variants.h"
#include "nncheck/worker_engine.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Campaign : public ::testing::Test {
 protected:
  CampaignOptions options(int64_t cases) {
    CampaignOptions o;
    o.generator.nodes = 8;
    o.generator.dtypes = {DType::Float32};
    o.generator.ops = {"MatMul", "Relu", "Add", "Sigmoid", "Tanh", "Transpose"};
    o.generator.opWeights = {{"MatMul", 3}, {"Relu", 3}};
    // Plain growth, where the fusion's MatMul -> Relu pair is common (the prior's blocks put an
    // Add between them).
    o.generator.blockShare = o.generator.constantShare = 0;
    o.seed = 7;
    o.seconds = 1e9;
    o.maxCases = cases;
    o.corpus = corpus_;
    o.timeout = 5s;
    return o;
  }

  testing::TempDir tmp_{"campaign"};
  fs::path corpus_ = tmp_.path() / "corpus";
};

TEST_F(Campaign, FindsShrinksLocalizesTriagesAndSavesTheFusionBugOnce) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  const std::vector<CampaignEngine> engines = {{"fusion=on", &fused}, {"fusion=off", &unfused}};
  CampaignStats s = runCampaign(engines, options(150));
  EXPECT_EQ(s.cases, 150);
  EXPECT_GT(s.failures[Outcome::Mismatch], 0);
  EXPECT_EQ(s.cases, s.passed + s.unsupported + s.nonfinite + s.failures[Outcome::Mismatch]);
  // One pattern per way the MatMul gets its right operand (a graph input or an initializer:
  // engines take different paths for constants); each shrunk to the two nodes.
  ASSERT_GE(s.findings.size(), 1u);
  ASSERT_LE(s.findings.size(), 2u);
  for (const Finding& f : s.findings) {
    EXPECT_EQ(f.info.kind, Outcome::Mismatch);
    EXPECT_TRUE(f.info.pattern == "mismatch at Relu: MatMul(x,x) Relu(#0)" ||
                f.info.pattern == "mismatch at Relu: MatMul(x,w) Relu(#0)")
        << f.info.pattern;
    EXPECT_EQ(f.info.nodesAfter, 2);
    ASSERT_TRUE(f.info.divergence);
    EXPECT_EQ(f.info.divergence->opType, "Relu");
    EXPECT_FALSE(f.info.divergence->exposed) << "only the fused pair differs";
    EXPECT_EQ(f.info.ops, (std::vector<std::string>{"MatMul", "Relu"}));
    EXPECT_EQ(f.info.triage, (std::map<std::string, Outcome>{{"fusion=on", Outcome::Mismatch},
                                                             {"fusion=off", Outcome::Pass}}));
    ASSERT_FALSE(f.dir.empty());
    const std::string json = readFile(f.dir / "nncheck.json");
    for (const char* needle : {"\"op\": \"Relu\"", "\"fusion=off\": \"pass\"",
                               "\"fusion=on\": \"mismatch\"", "\"pattern\": \"mismatch at Relu"})
      EXPECT_NE(json.find(needle), std::string::npos) << needle << "\n" << json;
    // How it was found, as the summary says it: the case number, from 1.
    EXPECT_GT(f.info.casesRun, 0);
    EXPECT_NE(json.find("\"cases_run_until_found\": " + std::to_string(f.info.casesRun) + ","),
              std::string::npos)
        << json;
  }
  EXPECT_EQ(s.newFindings(), static_cast<int>(s.findings.size()));
  EXPECT_EQ(loadCorpus(corpus_).size(), s.findings.size());

  // A second campaign knows the patterns from the corpus: nothing new is saved.
  CampaignStats again = runCampaign(engines, options(150));
  ASSERT_EQ(again.findings.size(), s.findings.size());
  EXPECT_EQ(again.newFindings(), 0);
  EXPECT_EQ(loadCorpus(corpus_).size(), s.findings.size());
  for (size_t i = 0; i < again.findings.size(); ++i)
    EXPECT_EQ(again.findings[i].dir, s.findings[i].dir) << "each names the corpus case it matched";
}

// A campaign that knows the bug (another corpus holds it) counts its failures under it, saves
// none, and recognises them before shrinking: by the first diverging node of the case as found.
TEST_F(Campaign, AKnownBugIsRecognisedBeforeShrinkingAndNotSaved) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  const std::vector<CampaignEngine> engines = {{"fusion=on", &fused}, {"fusion=off", &unfused}};
  const CampaignStats first = runCampaign(engines, options(150));
  ASSERT_GE(first.findings.size(), 1u);

  CampaignOptions o = options(150);
  o.known = {corpus_};
  o.corpus = tmp_.path() / "other";
  const CampaignStats s = runCampaign(engines, o);
  ASSERT_EQ(s.findings.size(), 1u) << "every hit counted under the one known root cause";
  const Finding& f = s.findings.front();
  ASSERT_TRUE(f.known);
  EXPECT_EQ(f.known->rootCause, "mismatch at Relu");
  EXPECT_EQ(f.info.pattern, "known: mismatch at Relu");
  EXPECT_EQ(f.info.shrinkSteps, 0) << "recognised before shrinking";
  EXPECT_GT(f.info.nodesAfter, 2) << "the case as found, not its minimized two nodes";
  EXPECT_EQ(f.hits, s.failures.at(Outcome::Mismatch) - s.repeats);
  EXPECT_EQ(s.newFindings(), 0);
  EXPECT_FALSE(fs::exists(o.corpus)) << "a known bug is not saved";
}

// With the fused configuration second, a campaign on the first alone never sees the bug; in
// round robin every configuration runs cases, and the finding names the one that failed.
TEST_F(Campaign, RoundRobinTestsEveryConfigurationNotOnlyTheFirst) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  const std::vector<CampaignEngine> engines = {{"fusion=off", &unfused}, {"fusion=on", &fused}};
  CampaignOptions o = options(150);
  o.corpus.clear();
  const CampaignStats firstOnly = runCampaign(engines, o);
  EXPECT_TRUE(firstOnly.findings.empty());
  o.roundRobin = true;
  const CampaignStats both = runCampaign(engines, o);
  ASSERT_FALSE(both.findings.empty());
  for (const Finding& f : both.findings) {
    EXPECT_EQ(f.info.configuration, "fusion=on");
    EXPECT_EQ(f.info.triage, (std::map<std::string, Outcome>{{"fusion=on", Outcome::Mismatch},
                                                             {"fusion=off", Outcome::Pass}}));
  }
}

TEST_F(Campaign, TheReferenceFindsNothing) {
  CampaignStats s = runCampaign({{"", &reference()}}, options(100));
  EXPECT_EQ(s.findings.size(), 0u);
  EXPECT_EQ(s.passed + s.nonfinite, 100);
  EXPECT_FALSE(fs::exists(corpus_));
}

TEST_F(Campaign, RejectedOpsAreUnsupportedNotBugsAndLoseWeight) {
  testing::RejectsTanh engine;
  CampaignOptions o = options(200);
  o.learnUnsupported = false;
  CampaignStats fixed = runCampaign({{"", &engine}}, o);
  o.learnUnsupported = true;
  CampaignStats learned = runCampaign({{"", &engine}}, o);
  EXPECT_EQ(fixed.findings.size(), 0u);
  EXPECT_EQ(learned.findings.size(), 0u);
  EXPECT_GT(fixed.rejectedOps["Tanh"], 0);
  EXPECT_EQ(fixed.rejectedOps.size(), 1u);  // the engine's message names the node: Tanh
  EXPECT_LT(learned.unsupported * 2, fixed.unsupported)
      << "learned " << learned.unsupported << ", fixed " << fixed.unsupported;
}

TEST_F(Campaign, TheSameSeedGivesTheSameCampaign) {
  testing::MatMulReluOddInner engine;
  CampaignOptions o = options(80);
  o.corpus.clear();
  CampaignStats a = runCampaign({{"", &engine}}, o);
  CampaignStats b = runCampaign({{"", &engine}}, o);
  EXPECT_EQ(a.passed, b.passed);
  EXPECT_EQ(a.nonfinite, b.nonfinite);
  EXPECT_EQ(a.failures, b.failures);
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) {
    EXPECT_EQ(a.findings[i].info.pattern, b.findings[i].info.pattern);
    EXPECT_EQ(serializeModel(a.findings[i].minimized.model),
              serializeModel(b.findings[i].minimized.model));
  }
}

TEST_F(Campaign, ReduceShrinksOneCaseOrSaysItDoesNotFail) {
  testing::MatMulReluOddInner engine;
  CampaignOptions o = options(1);
  GeneratorConfig cfg = o.generator;
  cfg.nodes = 20;
  // The first generated case this engine gets wrong.
  TestCase failing;
  for (uint64_t seed = 0;; ++seed) {
    failing = makeTestCase(cfg, seed);
    if (reduceCase({{"", &reference()}}, failing, o)) FAIL() << "the reference failed";
    if (auto f = reduceCase({{"", &engine}}, failing, o)) {
      EXPECT_EQ(f->info.nodesAfter, 2);
      EXPECT_EQ(f->info.pattern.rfind("mismatch at Relu: MatMul(", 0), 0u) << f->info.pattern;
      EXPECT_EQ(f->info.triage.at(""), Outcome::Mismatch);
      break;
    }
    ASSERT_LT(seed, 200u) << "no failing case in 200 seeds";
  }
}

// With the reference switched off: each configuration against the engine's baseline finds the
// fusion bug, records the oracle, and keeps its patterns apart from the reference's.
TEST_F(Campaign, TheBaselineOracleFindsTheFusionBugWithoutTheReference) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  CampaignOptions o = options(150);
  o.oracle = "baseline";
  o.baseline = {"fusion=off", &unfused};
  CampaignStats s = runCampaign({{"fusion=on", &fused}}, o);
  ASSERT_FALSE(s.findings.empty());
  for (const Finding& f : s.findings) {
    EXPECT_EQ(f.info.pattern.rfind("baseline: mismatch at Relu: MatMul(", 0), 0u) << f.info.pattern;
    EXPECT_EQ(f.info.nodesAfter, 2);
    EXPECT_EQ(f.info.oracle, "baseline");
    ASSERT_FALSE(f.dir.empty());
    EXPECT_EQ(loadCorpusCase(f.dir).oracle, "baseline");
  }
  // The baseline is no configuration under test, and an oracle that needs it needs it.
  EXPECT_THROW(runCampaign({{"fusion=off", &unfused}}, o), Error);
  o.baseline = {};
  EXPECT_THROW(runCampaign({{"fusion=on", &fused}}, o), Error);
  o.oracle = "nosuch";
  EXPECT_THROW(runCampaign({{"fusion=on", &fused}}, o), Error);
}

// With the reference switched off: the engine on a model against the engine on a variant in
// which a rewrite breaks the fused MatMul -> Relu apart (or plants it). Shrunk to the pair and
// at most two rewrites; the reference itself agrees with every variant.
TEST_F(Campaign, TheEquivalenceOracleFindsTheFusionBugWithoutTheReference) {
  testing::FusedMatMulRelu fused(true);
  CampaignOptions o = options(300);
  o.oracle = "equivalence";
  CampaignStats s = runCampaign({{"fusion=on", &fused}}, o);
  ASSERT_FALSE(s.findings.empty());
  for (const Finding& f : s.findings) {
    EXPECT_EQ(f.info.pattern.rfind("equivalence: mismatch at Relu: MatMul(", 0), 0u)
        << f.info.pattern;
    EXPECT_EQ(f.info.nodesAfter, 2) << modelToText(f.minimized.model);
    EXPECT_GE(f.minimized.rewrites.size(), 1u);
    EXPECT_LE(f.minimized.rewrites.size(), 2u) << describeRewrites(f.minimized.rewrites);
    ASSERT_FALSE(f.dir.empty());
    EXPECT_EQ(loadCorpusCase(f.dir).testCase.rewrites, f.minimized.rewrites);
  }
  CampaignOptions clean = options(300);
  clean.oracle = "equivalence";
  clean.corpus.clear();
  EXPECT_TRUE(runCampaign({{"", &reference()}}, clean).findings.empty());
}

// A user's oracle (registered as a library's would be): its mismatch is localized by running it
// on each node's sub-model, and its error stays an error (not a node's mismatch).
TEST_F(Campaign, AUsersOracleIsLocalizedByItsSubModelsAndItsErrorsStayErrors) {
  if (!oracles().contains("test-no-tanh-above-half"))
    oracles().add({.name = "test-no-tanh-above-half",
                   .description = "Tanh outputs stay at most 0.5; a Sigmoid is an error",
                   .check = [](const OracleEngines& e, const TestCase& tc) {
                     for (const Node& n : tc.model.graph.nodes)
                       if (n.opType == "Sigmoid")
                         throw PropertyFailure(Outcome::Error, "no Sigmoid here");
                     for (const auto& [name, t] : runOn(e.engine, tc))
                       for (float v : t.span<const float>())
                         if (v > 0.5f && tc.model.graph.nodes.back().opType == "Tanh")
                           throw PropertyFailure(Outcome::Mismatch, "above 0.5");
                   }});
  CampaignOptions o = options(100);
  o.oracle = "test-no-tanh-above-half";
  o.generator.ops = {"Tanh", "Sigmoid", "Relu"};
  CampaignStats s = runCampaign({{"", &reference()}}, o);
  bool sawMismatch = false, sawError = false;
  for (const Finding& f : s.findings) {
    const std::string& p = f.info.pattern;
    if (f.info.kind == Outcome::Mismatch) {
      sawMismatch = true;
      EXPECT_EQ(p.rfind("test-no-tanh-above-half: mismatch at Tanh: ", 0), 0u) << p;
      ASSERT_TRUE(f.info.divergence);
    } else if (f.info.kind == Outcome::Error) {
      sawError = true;
      EXPECT_EQ(p.rfind("test-no-tanh-above-half: error: ", 0), 0u) << p;
    }
  }
  EXPECT_TRUE(sawMismatch && sawError);
}

TEST_F(Campaign, TheDeterministicOracleFindsARacyKernel) {
  testing::RacyTanh racy(tmp_.path() / "counter");
  CampaignOptions o = options(60);
  o.oracle = "deterministic";
  CampaignStats s = runCampaign({{"", &racy}}, o);
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].info.ops, (std::vector<std::string>{"Tanh"}));
  EXPECT_EQ(s.findings[0].info.pattern.rfind("deterministic: mismatch", 0), 0u)
      << s.findings[0].info.pattern;
}

// A model the reference does not compute (a custom op): reduced and saved by the baseline
// oracle, without expected outputs, and checked as recorded.
TEST_F(Campaign, ReduceByTheBaselineSavesACaseTheReferenceCannotCompute) {
  testing::CustomTwice optimizing(true), baseline(false);
  CampaignOptions o = options(1);
  o.oracle = "baseline";
  o.baseline = {"optimize=off", &baseline};
  o.property = "reduce-custom";
  const std::vector<CampaignEngine> engines = {{"optimize=on", &optimizing}};
  EXPECT_FALSE(reduceCase(engines, testing::customTwiceCase({1, 2}), o));
  std::optional<Finding> f = reduceCase(engines, testing::customTwiceCase({1, -2, 3}), o);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->info.kind, Outcome::Mismatch);
  ASSERT_FALSE(f->dir.empty());
  EXPECT_TRUE(fs::exists(f->dir / "model.onnx"));
  EXPECT_FALSE(fs::exists(f->dir / "test_data_set_0" / "output_0.pb"));
  const CorpusCheck c =
      checkCorpus(corpus_, {.engines = engines, .baseline = o.baseline, .timeout = 5s});
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_TRUE(c.cases[0].ok) << c.cases[0].detail;
  EXPECT_NE(c.cases[0].detail.find("mismatch at optimize=on, as recorded"), std::string::npos)
      << c.cases[0].detail;
}

// Against an engine compiled with SanitizerCoverage (the optimizer double), the campaign keeps
// the cases that reached new edges and mutates them, finds the double's Transpose bug, and
// stays deterministic: the same seed gives the same cases, coverage and findings. The cases stay
// inside the double's capabilities; seed 1 is one search trajectory that reaches the bug within
// the case budget (seed 4 does not; a change to what the generator draws moves trajectories, and
// the seed with them).
// (bug_finding_bench compares guided, blind and pattern-directed generation per bug.)
TEST_F(Campaign, IsCoverageGuidedAndDeterministicAgainstAnInstrumentedEngine) {
#ifndef NNCHECK_INSTRUMENTED_DOUBLE
  GTEST_SKIP() << "this build has no instrumented double (NNCHECK_FUZZ)";
#endif
  testing::Optimizer buggy(testing::Optimizer::TransposeMergeOrder);
  CampaignOptions o;
  o.generator = configFor(buggy.capabilities());
  o.seed = 1;
  o.seconds = 1e9;
  o.maxCases = 1500;
  o.timeout = 5s;
  const CampaignStats guided = runCampaign({{"bug", &buggy}}, o);
  EXPECT_GT(guided.coverage.features, 0);
  EXPECT_GT(guided.coverage.kept, 0);
  EXPECT_GT(guided.coverage.mutants, guided.coverage.fresh / 2);  // half, once a case is kept
  std::vector<std::string> patterns;
  for (const Finding& f : guided.findings) patterns.push_back(f.info.pattern);
  EXPECT_NE(std::find(patterns.begin(), patterns.end(),
                      "mismatch in shape at Transpose: Transpose(x) Transpose(#0)"),
            patterns.end())
      << ::testing::PrintToString(patterns);
  const CampaignStats again = runCampaign({{"bug", &buggy}}, o);
  EXPECT_EQ(again.coverage.features, guided.coverage.features);
  EXPECT_EQ(again.coverage.kept, guided.coverage.kept);
  ASSERT_EQ(again.findings.size(), guided.findings.size());
  for (size_t i = 0; i < again.findings.size(); ++i) {
    EXPECT_EQ(again.findings[i].info.pattern, guided.findings[i].info.pattern);
    EXPECT_EQ(again.findings[i].info.casesRun, guided.findings[i].info.casesRun);
  }
  // Turned off, every case is fresh. (So it is against an engine that is not instrumented:
  // FuzzCommand.ACampaignAgainstOpenCVFindsSavesAndSummarizes. Not checked in this program,
  // where the double's instrumented copies of some library templates serve every engine.)
  o.coverageGuided = false;
  const CampaignStats blind = runCampaign({{"bug", &buggy}}, o);
  EXPECT_EQ(blind.coverage.features, 0);
  EXPECT_EQ(blind.coverage.mutants, 0);
}

TEST_F(Campaign, AFindingWhoseCaseIsGoneIsSavedAgain) {
  // Before, the pattern's claim was written before its case: a kill -9 (or a full disk) in
  // between left a claim without a case, and every later campaign called the finding "already
  // in the corpus" and never saved it. A claim without its case is now stale.
  testing::FusedMatMulRelu fused(true), unfused(false);
  const std::vector<CampaignEngine> engines = {{"fusion=on", &fused}, {"fusion=off", &unfused}};
  const CampaignStats first = runCampaign(engines, options(150));
  ASSERT_FALSE(first.findings.empty());
  for (const Finding& f : first.findings) fs::remove_all(f.dir);
  ASSERT_TRUE(loadCorpus(corpus_).empty());
  ASSERT_FALSE(fs::is_empty(corpus_ / "fuzz" / ".patterns")) << "the claims stay";
  const CampaignStats again = runCampaign(engines, options(150));
  EXPECT_EQ(again.newFindings(), static_cast<int>(again.findings.size()));
  EXPECT_EQ(loadCorpus(corpus_).size(), again.findings.size());
  for (const Finding& f : again.findings) EXPECT_TRUE(fs::exists(f.dir / "model.onnx"));
}

TEST_F(Campaign, TheTimeBoxEndsAModelBeingGrown) {
  // A 1,000-node model takes seconds to grow: before, --seconds was checked only between cases,
  // so `--nodes 100000 --seconds 5` ran past a minute.
  CampaignOptions o = options(0);
  o.generator.nodes = kMaxGeneratedNodes;
  o.generator.ops.clear();
  o.generator.opWeights.clear();
  o.seconds = 0.2;
  ReferenceBackend reference;
  const CampaignStats s = runCampaign({{"", &reference}}, o);
  EXPECT_EQ(s.cases, 0) << "a whole model was grown past the time box";
}

// A worker whose failure a fresh process does not confirm is started again: an engine that
// damaged its own state fails no more cases than those that damage it, and none is a finding.
TEST_F(Campaign, AWorkerThatFailsWhatAFreshProcessPassesIsStartedAgain) {
  testing::DamagedAfterTanh engine;
  const CampaignStats s = runCampaign({{"", &engine}}, options(150));
  EXPECT_TRUE(s.findings.empty()) << s.findings.front().info.pattern;
  ASSERT_GT(s.opCases.count("Tanh"), 0u);
  EXPECT_GT(s.unconfirmed, 0);
  // Kept running, the damaged worker would fail every case after the first Tanh.
  EXPECT_LE(s.unconfirmed, s.opCases.at("Tanh")) << "of " << s.cases << " cases";
  EXPECT_EQ(s.passed, s.cases);
}

// What follows a failure runs on the persistent worker, as cases do, the triage at the other
// configuration included (Isolated::at); a fresh process confirms each minimized case, one each.
// Before, each shrunk failure was confirmed, judged again, localized and triaged in fresh
// processes, five or more of them.
TEST_F(Campaign, WhatFollowsAFailureRunsOnTheWorkerAndAFreshProcessConfirmsIt) {
  testing::FusedMatMulRelu fusedInside(true), unfusedInside(false);
  const fs::path log = tmp_.path() / "runs";
  testing::NotesItsProcess fused(fusedInside, log), unfused(unfusedInside, log);
  const CampaignStats s =
      runCampaign({{"fusion=on", &fused}, {"fusion=off", &unfused}}, options(150));
  ASSERT_FALSE(s.findings.empty());
  EXPECT_EQ(s.unconfirmed, 0);
  // (A failure recognised as an earlier finding is neither shrunk nor confirmed again.)
  const int64_t shrunk = s.failures.at(Outcome::Mismatch) - s.repeats - s.recognised;
  const auto runs = testing::NotesItsProcess::read(log);
  const auto worker = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.second.size() < b.second.size();
  });
  ASSERT_NE(worker, runs.end());
  EXPECT_EQ(static_cast<int64_t>(runs.size()) - 1, shrunk)
      << "one fresh process for each shrunk failure, its minimized case's confirmation";
  EXPECT_EQ(s.afterFailureFresh, shrunk);
  EXPECT_GT(s.afterFailureJudged, shrunk);
  for (const auto& [pid, engines] : runs) {
    if (pid == worker->first) continue;
    EXPECT_EQ(engines, std::vector<std::string>{fused.name()});
  }
  EXPECT_NE(std::find(worker->second.begin(), worker->second.end(), unfused.name()),
            worker->second.end())
      << "triaged at fusion=off on the worker";
  for (const Finding& f : s.findings)
    EXPECT_EQ(f.info.triage, (std::map<std::string, Outcome>{{"fusion=on", Outcome::Mismatch},
                                                             {"fusion=off", Outcome::Pass}}));
  // Where the time after the failures went, by step: within it, each step that ran named.
  double steps = 0;
  for (const auto& [step, seconds] : s.afterFailureSpent) steps += seconds;
  EXPECT_LE(steps, s.shrinkSeconds);
  for (const char* step : {"shrinking", "confirmation", "localization", "triage"})
    EXPECT_TRUE(s.afterFailureSpent.count(step)) << step;
}

// Wrong (by one) on a model of two nodes or more, each run taking 0.5 s: shrinking it takes a
// step at a time, the failing node alone passing.
struct SlowAndWrong : Backend {
  std::string name() const override { return "double:slow-and-wrong"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    std::this_thread::sleep_for(500ms);
    TensorMap out = runReference(m, inputs);
    if (m.graph.nodes.size() < 2) return out;
    for (auto& [name, t] : out)
      if (t.dtype() == DType::Float32)
        for (float& v : t.span<float>()) v += 1;
    return out;
  }
};

// Shrinking ends with the time box, the case as shrunk so far saved and confirmed, its triage at
// the other configurations left out: a campaign ends on time whatever it found. Before, a finding
// was shrunk to the end (here, to one node) past the box, and then triaged at every
// configuration (a hang's triage is a timeout each: a LiteRT campaign ran 178 s past its box).
TEST_F(Campaign, TheTimeBoxEndsShrinkingAndTheCaseAsShrunkIsTheFinding) {
  SlowAndWrong engine;
  CampaignOptions o = options(0);
  // The first case fails at about 0.5 s, its localization takes 0.5 s, each shrink step (the
  // failing node alone first) 0.5 s.
  o.seconds = 1.5;
  o.checkSetUp = false;
  const CampaignStats s = runCampaign({{"a", &engine}, {"b", &engine}}, o);
  ASSERT_EQ(s.findings.size(), 1u);
  const Finding& f = s.findings.front();
  EXPECT_LE(f.info.shrinkSteps, 3);
  EXPECT_GT(f.info.nodesAfter, 1) << "shrunk past the time box";
  EXPECT_FALSE(f.dir.empty()) << "the finding is saved";
  EXPECT_TRUE(f.timeBoxEnded);
  EXPECT_EQ(f.info.triage, (std::map<std::string, Outcome>{{f.info.configuration, f.info.kind}}))
      << "triaged past the time box";
}

// Nothing found is lost to the worker: the same seeds give the same findings whether what follows
// each failure runs on the worker or, as before, in fresh processes.
TEST_F(Campaign, TheWorkerFindsWhatFreshProcessesFind) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  const std::vector<CampaignEngine> engines = {{"fusion=on", &fused}, {"fusion=off", &unfused}};
  CampaignOptions o = options(150);
  o.corpus.clear();
  const CampaignStats onWorker = runCampaign(engines, o);
  o.freshAfterFailures = true;
  const CampaignStats afresh = runCampaign(engines, o);
  ASSERT_FALSE(onWorker.findings.empty());
  ASSERT_EQ(onWorker.findings.size(), afresh.findings.size());
  for (size_t i = 0; i < afresh.findings.size(); ++i) {
    const Finding &a = onWorker.findings[i], &b = afresh.findings[i];
    EXPECT_EQ(a.info.pattern, b.info.pattern);
    EXPECT_EQ(contentHash(a.minimized), contentHash(b.minimized));
    EXPECT_EQ(a.info.triage, b.info.triage);
    EXPECT_EQ(a.hits, b.hits);
  }
  EXPECT_EQ(onWorker.failures, afresh.failures);
  EXPECT_EQ(afresh.afterFailureJudged, 0);
  EXPECT_GT(afresh.afterFailureFresh, onWorker.afterFailureFresh);
}

#ifdef NNCHECK_SDK_PYTHON
// An engine whose state breaks it (tests/backends/workers/damaged_worker.py: wrong once its
// process ran a Tanh). Its failures are told apart as the worker's state, no finding saved,
// whether a fresh process is a new program or a fork of one that imported the engine and ran
// nothing (its facts' fresh_forks); with forks, the program that serves them starts once.
TEST_F(Campaign, FreshForksTellTheWorkersStateApartAndStartTheEngineOnce) {
  const fs::path starts = tmp_.path() / "starts";
  ::setenv("NNCHECK_TEST_STARTS", starts.c_str(), 1);
  const auto count = [&](const std::string& what) {
    std::istringstream lines(readFile(starts));
    int n = 0;
    for (std::string line; std::getline(lines, line);) n += line == what;
    return n;
  };
  for (const bool forks : {true, false}) {
    SCOPED_TRACE(forks ? "fresh forks" : "new programs");
    fs::remove(starts);
    WorkerBackend engine(WorkerCommand::parse(std::string(NNCHECK_SDK_PYTHON) +
                                              " " NNCHECK_SOURCE_DIR
                                              "/tests/backends/workers/damaged_worker.py" +
                                              (forks ? "" : " no-forks")));
    CampaignOptions o = options(30);
    o.corpus.clear();
    const CampaignStats s = runCampaign({{"", &engine}}, o);
    EXPECT_GT(s.unconfirmed, 0);
    EXPECT_TRUE(s.findings.empty()) << s.findings.front().info.pattern;
    EXPECT_GT(s.afterFailureFresh, 1);
    if (forks) {
      EXPECT_EQ(count("forks"), 1) << readFile(starts);
      EXPECT_LE(count("worker"), 2 + s.unconfirmed) << "its facts, and a worker per restart";
    } else {
      EXPECT_EQ(count("forks"), 0);
      EXPECT_GE(count("worker"), 1 + s.afterFailureFresh) << "a program per fresh run";
    }
  }
  ::unsetenv("NNCHECK_TEST_STARTS");
}
#endif

// What the campaign's findings are by `of`: their root causes, their patterns.
std::set<std::string> findingsBy(const CampaignStats& s,
                                 const std::function<std::string(const Finding&)>& of) {
  std::set<std::string> out;
  for (const Finding& f : s.findings) out.insert(of(f));
  return out;
}
std::set<std::string> rootCausesOf(const CampaignStats& s) {
  return findingsBy(s, [](const Finding& f) { return rootCause(f.info, f.minimized.model); });
}
std::set<std::string> patternsOf(const CampaignStats& s) {
  return findingsBy(s, [](const Finding& f) { return f.info.pattern; });
}

// A bug that fails at every configuration of a round robin is shrunk once: its failures at the
// other configurations are recognised as the finding before shrinking, as a known bug is. The
// same seeds find the same root causes as when every failure is shrunk.
TEST_F(Campaign, AFailureOfAnEarlierFindingIsRecognisedBeforeShrinking) {
  testing::FusedMatMulRelu one(true), other(true);
  const std::vector<CampaignEngine> engines = {{"a", &one}, {"b", &other}};
  CampaignOptions o = options(150);
  o.corpus.clear();
  o.roundRobin = true;
  o.learnUnsupported = false;
  const CampaignStats recognising = runCampaign(engines, o);
  o.shrinksPerKey = 0;  // every failure shrunk, none recognised
  const CampaignStats shrinkingAll = runCampaign(engines, o);
  ASSERT_FALSE(recognising.findings.empty());
  EXPECT_GT(recognising.recognised, 0);
  EXPECT_EQ(shrinkingAll.recognised, 0);
  EXPECT_EQ(rootCausesOf(recognising), rootCausesOf(shrinkingAll));
  EXPECT_EQ(rootCausesOf(recognising), std::set<std::string>{"mismatch at Relu"});
  int64_t hits = 0;
  for (const Finding& f : recognising.findings) {
    EXPECT_EQ(f.info.nodesAfter, 2) << "the findings are shrunk ones";
    EXPECT_FALSE(f.recognised);
    hits += f.hits;
  }
  EXPECT_EQ(hits, recognising.failures.at(Outcome::Mismatch) - recognising.repeats)
      << "each failure shrunk or recognised counts under its finding";
  EXPECT_LT(recognising.afterFailureJudged, shrinkingAll.afterFailureJudged);
}

// A crash is confirmed in a fresh process before it is anything: one that only what a worker ran
// before makes is no finding, the case counted as the fresh process ran it; one that every
// process makes is found and shrunk to its op.
TEST_F(Campaign, ACrashIsConfirmedInAFreshProcess) {
  testing::CrashesOnTanh afterSigmoid(false), always(true);
  const CampaignStats s = runCampaign({{"", &afterSigmoid}}, options(150));
  ASSERT_GT(s.opCases.count("Tanh"), 0u);
  EXPECT_TRUE(s.findings.empty()) << s.findings.front().info.pattern;
  EXPECT_EQ(s.failures.count(Outcome::Crash), 0u);
  EXPECT_EQ(s.passed + s.unsupported + s.nonfinite, s.cases);

  const CampaignStats found = runCampaign({{"", &always}}, options(150));
  ASSERT_FALSE(found.findings.empty());
  for (const Finding& f : found.findings) {
    EXPECT_EQ(f.info.kind, Outcome::Crash);
    EXPECT_EQ(f.minimized.model.graph.nodes.size(), 1u) << modelToText(f.minimized.model);
    EXPECT_EQ(f.minimized.model.graph.nodes.front().opType, "Tanh");
  }
}

// A known crash is recognised before shrinking by the node it happens at: that node alone crashes,
// and alone it has the known root cause. Before, each crash was shrunk, in fresh processes.
TEST_F(Campaign, AKnownCrashIsRecognisedBeforeShrinkingByItsNodeAlone) {
  testing::CrashesOnTanh always(true);
  const CampaignStats first = runCampaign({{"", &always}}, options(60));
  ASSERT_FALSE(first.findings.empty());
  EXPECT_EQ(rootCausesOf(first), std::set<std::string>{"crash (SIGSEGV) at Tanh on float32"});
  CampaignOptions o = options(60);
  o.known = {corpus_};
  o.corpus = tmp_.path() / "other";
  const CampaignStats s = runCampaign({{"", &always}}, o);
  ASSERT_EQ(s.findings.size(), 1u) << s.findings.back().info.pattern;
  const Finding& f = s.findings.front();
  ASSERT_TRUE(f.known);
  EXPECT_EQ(f.info.pattern, "known: crash (SIGSEGV) at Tanh on float32");
  EXPECT_EQ(f.info.shrinkSteps, 0) << "recognised before shrinking";
  EXPECT_EQ(f.hits, s.failures.at(Outcome::Crash) - s.repeats);
  EXPECT_LT(s.afterFailureFresh, first.afterFailureFresh);
  EXPECT_FALSE(fs::exists(o.corpus)) << "a known bug is not saved";
}

// A known bug is recognised from the failing run itself, on the worker, before anything else
// runs, whichever oracle shows it: the reference's corpus names the bug an equivalence campaign
// meets, and no fresh process starts for it.
TEST_F(Campaign, AKnownBugCostsOneRecognitionWhicheverOracleShowsIt) {
  testing::FusedMatMulRelu fusedInside(true), unfused(false);
  ASSERT_FALSE(runCampaign({{"fusion=on", &fusedInside}, {"fusion=off", &unfused}}, options(150))
                   .findings.empty());
  const fs::path log = tmp_.path() / "runs";
  testing::NotesItsProcess fused(fusedInside, log);
  CampaignOptions o = options(300);
  o.oracle = "equivalence";
  o.known = {corpus_};
  o.corpus = tmp_.path() / "other";
  const CampaignStats s = runCampaign({{"fusion=on", &fused}}, o);
  ASSERT_EQ(s.findings.size(), 1u) << s.findings.back().info.pattern;
  const Finding& f = s.findings.front();
  ASSERT_TRUE(f.known);
  EXPECT_EQ(f.known->rootCause, "mismatch at Relu");
  EXPECT_EQ(f.info.pattern, "known: mismatch at Relu");
  EXPECT_EQ(f.hits, s.failures.at(Outcome::Mismatch) - s.repeats);
  EXPECT_EQ(testing::NotesItsProcess::read(log).size(), 1u) << "only the worker ran";
  EXPECT_FALSE(fs::exists(o.corpus)) << "a known bug is not saved";
}

// A campaign names the functions of an engine compiled with a pc-table that no case reached.
TEST_F(Campaign, NamesTheEngineFunctionsNoCaseReached) {
#ifndef NNCHECK_PC_TABLE_FIXTURE
  GTEST_SKIP() << "this build has no module with a pc-table (no clang, or NNCHECK_FUZZ)";
#else
  testing::ReachesOneFixtureFunction engine;
  const CampaignStats s = runCampaign({{"", &engine}}, options(5));
  EXPECT_EQ(s.passed, 5);
  EXPECT_EQ(s.unreachedFunctions.rfind("engine functions never reached: 3 of 4 (", 0), 0u)
      << s.unreachedFunctions;
#endif
}
// (The fixture's module, linked into this binary, is no code of this engine.)
TEST_F(Campaign, NamesNoFunctionsOfCodeNoCaseEntered) {
  testing::FusedMatMulRelu correct(false);
  EXPECT_EQ(runCampaign({{"", &correct}}, options(3)).unreachedFunctions, "");
}

TEST(FailurePattern, NamesOpsWiringKindAndDivergingOp) {
  TestCase tc;
  tc.model.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1})};
  tc.model.graph.initializers = {{"w", Tensor::fromVector<float>({1}, {1}), ""}};
  tc.model.graph.nodes = {Node::make("Add", {"x", "w"}, {"a"}, "add"),
                          Node::make("Mul", {"a", "x"}, {"b"}, "mul")};
  EXPECT_EQ(failurePattern(tc, Outcome::Mismatch, "Mul"), "mismatch at Mul: Add(x,w) Mul(#0,x)");
  EXPECT_EQ(failurePattern(tc, Outcome::Crash, ""), "crash: Add(x,w) Mul(#0,x)");
  EXPECT_EQ(rejectedOp("cannot create layer (onnx_node!mul) of type", tc.model), "Mul");
  EXPECT_EQ(rejectedOp("no node named", tc.model), "");
}

// Three shards run disjoint slices that are, between them, the unsharded campaign's cases: the
// same counts and, with every failure shrunk and weights fixed, the same patterns. Both
// configurations run cases in every shard.
TEST_F(Campaign, ShardsRunDisjointSlicesThatTogetherAreTheWholeCampaign) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  const std::vector<CampaignEngine> engines = {{"fusion=off", &unfused}, {"fusion=on", &fused}};
  CampaignOptions o = options(120);
  o.corpus.clear();
  o.learnUnsupported = false;
  o.coverageGuided = false;  // which cases a guide keeps depends on what came before
  o.shrinksPerKey = 0;
  o.roundRobin = true;
  const CampaignStats whole = runCampaign(engines, o);
  ASSERT_FALSE(whole.findings.empty());
  CampaignStats sum;
  std::set<std::string> patterns;
  for (int k = 0; k < 3; ++k) {
    o.shardIndex = k;
    o.shardCount = 3;
    const CampaignStats part = runCampaign(engines, o);
    EXPECT_EQ(part.cases, 40);
    EXPECT_EQ(part.plannedCases, 40);
    EXPECT_FALSE(part.findings.empty()) << "the fused configuration runs cases in shard " << k;
    sum.cases += part.cases;
    sum.passed += part.passed;
    sum.failures[Outcome::Mismatch] += part.failures.at(Outcome::Mismatch);
    for (const auto& [op, n] : part.opCases) sum.opCases[op] += n;
    for (const Finding& f : part.findings) {
      patterns.insert(f.info.pattern);
      EXPECT_EQ((f.info.casesRun - 1) % 3, k) << "case numbers are the whole campaign's";
    }
  }
  EXPECT_EQ(sum.cases, whole.cases);
  EXPECT_EQ(sum.passed, whole.passed);
  EXPECT_EQ(sum.failures[Outcome::Mismatch], whole.failures.at(Outcome::Mismatch));
  EXPECT_EQ(sum.opCases, whole.opCases);
  EXPECT_EQ(patterns, patternsOf(whole));

  o.shardIndex = 3;
  EXPECT_THROW(runCampaign(engines, o), Error);
}

// Workers on every core run, between them, the cases of one campaign, save into one corpus
// each pattern once, and merge into one summary, the same for the same seed.
TEST_F(Campaign, JobsRunOneCampaignIntoOneCorpusAndOneSummary) {
  testing::FusedMatMulRelu fused(true), unfused(false);
  const std::vector<CampaignEngine> engines = {{"fusion=off", &unfused}, {"fusion=on", &fused}};
  CampaignOptions o = options(120);
  o.learnUnsupported = false;
  o.coverageGuided = false;
  o.shrinksPerKey = 0;
  o.roundRobin = true;
  o.corpus = tmp_.path() / "whole";
  const CampaignStats whole = runCampaign(engines, o);
  ASSERT_FALSE(whole.findings.empty());
  int progressCalls = 0;
  int64_t lastCases = 0;
  auto inJobs = [&](const fs::path& corpus) {
    o.corpus = corpus;
    lastCases = 0;
    return runCampaignJobs(engines, o, 3, [&](const CampaignStats& now) {
      ++progressCalls;
      EXPECT_GE(now.cases, lastCases) << "the summed counts only grow";
      lastCases = now.cases;
    });
  };
  const CampaignStats jobs = inJobs(tmp_.path() / "jobs");
  EXPECT_GT(progressCalls, 0);
  EXPECT_EQ(jobs.cases, whole.cases);
  EXPECT_EQ(jobs.passed, whole.passed);
  EXPECT_EQ(jobs.plannedCases, whole.plannedCases);
  EXPECT_EQ(jobs.failures, whole.failures);
  EXPECT_EQ(jobs.opCases, whole.opCases);
  EXPECT_EQ(patternsOf(jobs), patternsOf(whole));
  EXPECT_TRUE(jobs.afterFailureSpent.count("shrinking")) << "the workers' steps, merged";
  ASSERT_FALSE(jobs.timeline.empty());
  EXPECT_EQ(jobs.timeline.back().cases, whole.cases);
  int hitsWhole = 0, hitsJobs = 0;
  for (const Finding& f : whole.findings) hitsWhole += f.hits;
  for (const Finding& f : jobs.findings) hitsJobs += f.hits;
  EXPECT_EQ(hitsJobs, hitsWhole);
  // One corpus, each pattern saved once, each finding new and pointing at its saved case, which
  // holds the finding's record whole.
  EXPECT_EQ(loadCorpus(tmp_.path() / "jobs").size(), jobs.findings.size());
  for (const Finding& f : jobs.findings) {
    EXPECT_FALSE(f.fromCorpus) << f.info.pattern;
    ASSERT_TRUE(fs::exists(f.dir)) << f.info.pattern;
    EXPECT_EQ(loadCorpusCase(f.dir).pattern, f.info.pattern);
    EXPECT_EQ(f.dir.filename(), contentHash(f.minimized)) << "the case shown is the case saved";
    EXPECT_GT(f.info.casesRun, 0);
    EXPECT_LE(f.info.nodesAfter, f.info.nodesBefore);
  }
  for (size_t i = 1; i < jobs.findings.size(); ++i)
    EXPECT_LE(jobs.findings[i - 1].info.casesRun, jobs.findings[i].info.casesRun)
        << "in the order of the cases that found them";
  // Again on that corpus: everything is already there.
  const CampaignStats again = inJobs(tmp_.path() / "jobs");
  EXPECT_EQ(again.newFindings(), 0);
  EXPECT_EQ(patternsOf(again), patternsOf(jobs));
  // The same seed into a fresh corpus: the same campaign.
  const CampaignStats same = inJobs(tmp_.path() / "same");
  ASSERT_EQ(same.findings.size(), jobs.findings.size());
  for (size_t i = 0; i < same.findings.size(); ++i) {
    EXPECT_EQ(same.findings[i].info.pattern, jobs.findings[i].info.pattern);
    EXPECT_EQ(same.findings[i].hits, jobs.findings[i].hits);
    EXPECT_EQ(contentHash(same.findings[i].minimized), contentHash(jobs.findings[i].minimized));
  }
}

TEST_F(Campaign, AWorkerThatFailsIsNamed) {
  testing::FusedMatMulRelu fused(true);
  CampaignOptions o = options(10);
  o.oracle = "nosuch";  // every worker's campaign refuses it as it starts
  try {
    runCampaignJobs({{"fusion=on", &fused}}, o, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every worker was lost: worker 1 of 2 failed: unknown "
                                         "oracle 'nosuch'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("worker 2 of 2 failed: "), std::string::npos) << e.what();
  }
  o.oracle = "reference";
  EXPECT_THROW(runCampaignJobs({{"fusion=on", &fused}}, o, 0), Error);
  o.shardIndex = 1;  // of 1: refused here, before any worker starts
  EXPECT_THROW(runCampaignJobs({{"fusion=on", &fused}}, o, 2), Error);
}

TEST_F(Campaign, RecordsItsRateOverTimeAndTheOpsItGenerated) {
  CampaignOptions o = options(60);
  o.corpus.clear();
  o.coverageGuided = false;
  const CampaignStats s = runCampaign({{"", &reference()}}, o);
  ASSERT_FALSE(s.timeline.empty());
  EXPECT_EQ(s.timeline.back().cases, 60);
  EXPECT_EQ(s.timeline.back().passed, s.passed);
  for (size_t i = 1; i < s.timeline.size(); ++i)
    EXPECT_LE(s.timeline[i - 1].cases, s.timeline[i].cases);
  int64_t holdingMatMul = 0;
  for (uint64_t i = 0; i < 60; ++i) {
    const TestCase tc = makeTestCase(o.generator, o.seed + i);
    holdingMatMul += std::any_of(tc.model.graph.nodes.begin(), tc.model.graph.nodes.end(),
                                 [](const Node& n) { return n.opType == "MatMul"; });
  }
  EXPECT_EQ(s.opCases.at("MatMul"), holdingMatMul);
}

}  // namespace
}  // namespace nncheck
