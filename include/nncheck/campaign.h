// A differential campaign: generate -> run on the engine -> judge by the oracle (the reference by
// default; nncheck/oracle.h) -> shrink -> localize -> triage across configurations -> save
// (harness/after_failure.h), for a time or a number of cases. What `nncheck fuzz` runs.
//
// Cases the engine rejects are counted as unsupported, not as bugs, and the op it names loses
// weight in the generator, so the campaign spends its time on what the engine runs. Cases whose
// reference computes NaN/Inf are skipped (nncheck/tolerance.h). Failures are deduplicated on
// their minimized pattern (failure kind, ops and wiring, first diverging op): one corpus entry
// each, with a hit count. The engine runs in a persistent isolated process (with roundRobin, at
// each configuration in turn, one process for all), and what follows a failure runs there too,
// as cases do: the known bugs' recognition, shrinking, localization, the triage across the
// configurations and the culprit search (Isolated::at); a fresh process confirms the minimized
// case, and runs everything for a crash or a hang, which may come from what earlier cases left
// (a failure no fresh process repeats is no finding, and the worker is started again). When the
// engine is compiled with SanitizerCoverage, cases are coverage-guided (nncheck/coverage_guide.h).
//
//   nncheck::CampaignOptions o;
//   o.generator = nncheck::configFor(cv.capabilities());
//   o.seconds = 60;
//   o.corpus = "nncheck-corpus";
//   nncheck::CampaignStats s = nncheck::runCampaign({{"fusion=on", &cv}}, o);
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nncheck/corpus.h"
#include "nncheck/coverage_guide.h"
#include "nncheck/generator.h"
#include "nncheck/shrink.h"

namespace nncheck {

// A distinct failure of a campaign (or of check()): its record, its minimized case, and where
// it is saved.
struct Finding {
  // What nncheck.json holds: kind, message and figures, nodes before and after shrinking, first
  // diverging node, configuration triage, pattern, culprit, and known failures when marked.
  FailureInfo info;
  TestCase minimized;
  // The corpus case of its pattern: saved here, or already there (fromCorpus); empty when not
  // saved.
  std::filesystem::path dir;
  bool fromCorpus = false;          // the pattern was in the corpus already (saved by another run)
  int hits = 1;                     // shrunk failures with this pattern (campaigns count them)
  std::string saveError{};          // why it could not be saved; empty: saved, or not asked to
  std::optional<KnownBug> known{};  // the known bug it is (FailurePath::known); not saved then
  // Recognised before shrinking as the campaign's earlier finding of its pattern (its root
  // cause): a hit of that one, nothing shrunk or saved.
  bool recognised = false;
  // What a fresh process gave when it did not repeat the failure, neither minimized nor as
  // found: the state earlier cases left in the persistent worker was part of it. No finding
  // then, and nothing saved.
  std::optional<Verdict> unrepeatedAfresh{};
  // Confirmed after the campaign's time box ended: its triage at the other configurations, or
  // its culprit search, was left out, so that the campaign ended on time.
  bool timeBoxEnded = false;
  // The seconds each step after the failure took ("recognition", "shrinking", "confirmation",
  // "localization", "triage", "culprit search"): where a finding's engine time went.
  std::map<std::string, double> spent{};
};

struct CampaignEngine {
  std::string configuration;  // e.g. "target=cpu,fusion=on"
  Backend* backend = nullptr;
};

// An engine of the configuration with the named optimizations switched off too
// (EngineInfo::withDisabled), for the culprit search, and that configuration's name.
struct EngineWithout {
  std::function<std::string(const std::string& configuration,
                            const std::vector<std::string>& disabled)>
      configuration;
  std::function<std::unique_ptr<Backend>(const std::string& configuration)> make;
};

struct CampaignOptions {
  GeneratorConfig generator;  // usually configFor(engine.capabilities())
  // What cases are judged against (nncheck/oracle.h, by name). An oracle that needs the
  // baseline (OracleInfo::needsBaseline) compares each engine with `baseline`, the engine's
  // baseline configuration, which then must not be among the engines.
  std::string oracle = "reference";
  CampaignEngine baseline{};
  uint64_t seed = 1;  // case i uses seed + i
  // A disjoint slice of the cases: this campaign runs case i only where i mod shardCount is
  // shardIndex (from 0). Campaigns of the same seed and settings over every shard run, between
  // them, exactly the cases one unsharded campaign runs.
  int shardIndex = 0, shardCount = 1;
  double seconds = 60;      // time box
  int64_t maxCases = 0;     // 0: until the time is up; else stop after this many (over all shards)
  int64_t maxFindings = 0;  // 0: no limit; else stop at this many distinct ones
  std::filesystem::path corpus;   // where findings are saved; empty: not saved
  std::string property = "fuzz";  // <corpus>/<property>/<hash>/
  // Corpora of known bugs (an engine's shipped corpus, a team's own list): a finding with the
  // root cause of one of their cases is counted as that known bug (Finding::known) and not saved.
  std::vector<std::filesystem::path> known;
  std::chrono::milliseconds timeout{10000};  // per engine run
  // Each finding's shrinking: at most these candidate runs and seconds, and never past the time
  // box (the case as shrunk then is the finding).
  ShrinkBudget shrink{400, 20};
  // Failures of one kind at one op shrunk before the rest count as repeats (0: every failure is
  // shrunk, so that which patterns are found does not depend on the order cases come in).
  int shrinksPerKey = 2;
  bool learnUnsupported = true;    // lower the weight of ops the engine rejects
  bool coverageGuided = true;      // mutate cases that reached new coverage (when there is any)
  bool markKnownFailures = false;  // save findings with known_failures = their failing configs
  // Case i runs on engine i mod n (all on the one persistent worker, Isolated::at), so every
  // configuration is tested (a compiler's optimizing levels, not only its first); else all run
  // on the first. Either way a failure is triaged across all.
  bool roundRobin = false;
  // What follows each failure runs in fresh processes, as a crash's does, not on the worker that
  // ran the case: slower (an engine's start per run), for an engine whose state carries over
  // from one run or configuration to the next.
  bool freshAfterFailures = false;
  // Asked between cases: true ends the campaign as its time box would, after the case in
  // progress (and what follows its failure), with the summary of what ran (nncheck fuzz asks
  // whether Ctrl-C was pressed). With jobs, each worker is asked to stop the same way.
  std::function<bool()> stop{};
  // Check that each engine works here before the first case (harness/probe.h,
  // checkEngineSetUp): a broken set-up is a SetUpError, never a finding. runCampaignJobs checks
  // once, then its workers skip it.
  bool checkSetUp = true;
  // With both functions set, each finding that fails in a configuration with optimizations
  // (Backend::optimizations) gets its culprit: the optimizations it needs, and the workaround.
  EngineWithout engineWithout{};
};

// The campaign's counts at one moment, for a plot of its rate over time.
struct CampaignSample {
  double seconds = 0;
  int64_t cases = 0, passed = 0, unsupported = 0, nonfinite = 0, failures = 0;
};

struct CampaignStats {
  int64_t cases = 0, passed = 0, unsupported = 0, nonfinite = 0;
  int64_t plannedCases = 0;  // the cases this shard runs with maxCases; 0: time-boxed
  // What the campaign is doing when progress is reported: "" between cases, or the failure it
  // is shrinking ("shrinking mismatch@Conv"), which may take many seconds.
  std::string activity;
  int64_t unconfirmed = 0;  // failed in the persistent process, not in a fresh one (repeats
                            // are not run in a fresh one)
  int64_t repeats = 0;      // failures not shrunk: their kind and op were shrunk often enough
  int64_t recognised = 0;   // failures recognised before shrinking as an earlier finding
  // What followed the failures: the cases judged on the persistent worker (one or more engine
  // runs each, as the oracle asks; a case asked again for one failure is not run again) and in
  // fresh processes (each one an engine's start).
  int64_t afterFailureJudged = 0, afterFailureFresh = 0;
  std::map<Outcome, int64_t> failures;         // by kind (repeats as the worker saw them)
  std::map<std::string, int64_t> rejectedOps;  // unsupported cases by the op the engine named
  std::map<std::string, int64_t> opCases;      // generated cases holding each op
  std::vector<CampaignSample> timeline;        // a sample about every second, and at the end
  double seconds = 0, shrinkSeconds = 0;
  std::map<std::string, double> afterFailureSpent;  // shrinkSeconds by step (Finding::spent)
  // Coverage-guided generation (nncheck/coverage_guide.h): all zero when the engine is not
  // instrumented, and the campaign then generates every case afresh.
  CoverageStats coverage;
  // With an engine compiled with SanitizerCoverage's pc-table (clang), the functions of its code
  // no case reached, largest first: "engine functions never reached: N of M (...), largest
  // first: ..."; empty otherwise. Set when the campaign ends.
  std::string unreachedFunctions;
  // The engines' optimizations (Backend::optimizations of every configuration run), sorted, and
  // by name the cases in which each changed the model (Verdict::optimizations; also those the
  // engines apply outside that list): WhiteFox's measure of a generator's reach into an
  // optimizer, "triggered N of M".
  std::vector<std::string> optimizations;
  std::map<std::string, int64_t> optimizationCases;
  // The equivalence rewrites (TestCase::rewrites, nncheck/variants.h) by rule: the cases whose
  // variant applied each. Empty when the oracle compares no variants.
  std::map<std::string, int64_t> rewriteCases;
  std::vector<Finding> findings;  // distinct patterns, in the order found
  bool interrupted = false;       // CampaignOptions::stop ended it before its budget
  // runCampaignJobs: the workers whose results were lost (killed, failed), each named with why
  // and its cases by its last report; the counts and findings above are the others'.
  std::vector<std::string> lostWorkers;
  // Saved cases of the corpus that could not be read (each message names the file): skipped.
  std::vector<std::string> unreadableCorpusCases;
  int newFindings() const;
};

// What a campaign refuses before it starts: nncheck::Error for an empty engine list, a bad
// generator config or shard.
void checkCampaign(const std::vector<CampaignEngine>& engines, const CampaignOptions& o);

// Throws nncheck::Error for an empty engine list, a bad generator config or shard. `progress` is
// called once before the engines start, between cases at most twice a second, and as a shrink
// starts.
CampaignStats runCampaign(const std::vector<CampaignEngine>& engines, const CampaignOptions& o,
                          const std::function<void(const CampaignStats&)>& progress = {});

// The campaign on `jobs` cores: `jobs` worker processes forked from this one, worker j running
// the cases of o's shard with i / shardCount mod jobs = j (between them, exactly the shard's
// cases; each learns op weights and keeps a coverage guide of its own), all saving into
// o.corpus, where each pattern is saved once. Their results are merged into one CampaignStats:
// counts summed, one finding per pattern in the order of the cases that found it (hits summed,
// new when any worker saved it), the timelines summed, the coverage features the most one
// worker reached, and the functions never reached as the first worker reports them. `progress`
// runs in this process only, with the workers' latest counts summed (each finding known by its
// pattern alone), and not before every worker is forked, so it may start threads. Each worker
// stops at o.maxFindings of its own, and when o.stop says so here. jobs = 1 is runCampaign. The
// engines must not have started processes or threads yet (each worker starts its own). Workers
// hand back their results over pipes, needing no file. A worker that is killed or fails is
// named in CampaignStats::lostWorkers and the others' results stand; throws nncheck::Error when
// every worker is lost (a worker is killed with this process).
CampaignStats runCampaignJobs(const std::vector<CampaignEngine>& engines, const CampaignOptions& o,
                              int jobs,
                              const std::function<void(const CampaignStats&)>& progress = {});

// Reduces one case (a saved failure, a hand-made model) by the oracle: nullopt when it passes on
// the first engine; else shrunk (keeping its failure kind), localized, triaged and, with a
// corpus, saved. Throws nncheck::Error when the case is no test (the engine or the reference does
// not take it, or NaN/Inf), saying why. For an oracle that compares variants, a case without
// rewrites gets those its seed draws.
std::optional<Finding> reduceCase(const std::vector<CampaignEngine>& engines, const TestCase& tc,
                                  const CampaignOptions& o);

// The op type of the node an engine's message names (the longest node name it contains), or "".
std::string rejectedOp(const std::string& message, const Model& model);

}  // namespace nncheck
