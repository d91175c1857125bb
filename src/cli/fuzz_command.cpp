// nncheck fuzz: a time-boxed differential campaign against an engine (nncheck/campaign.h), with
// a live progress line, a summary table, new failures saved to the corpus, an HTML report on
// request, and a shard of the seed space for campaigns spread over machines.
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>

#include "backends/engine_files.h"
#include "cli/campaign_engines.h"
#include "cli/commands.h"
#include "cli/engines.h"
#include "cli/generation_options.h"
#include "cli/interrupt.h"
#include "cli/progress.h"
#include "cli/root_causes.h"
#include "cli/shard.h"
#include "core/deadline.h"
#include "core/files.h"
#include "harness/report.h"
#include "harness/root_cause.h"
#include "nncheck/campaign.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/variants.h"

namespace nncheck::cli {
namespace {

struct FuzzOptions {
  CampaignEngineOptions engine;
  double seconds = 60;
  int64_t cases = 0;
  uint64_t seed = 1;
  int nodes = 10;
  GenerationOptions generation;
  std::string corpus = "nncheck-corpus";
  std::vector<std::string> known;  // --known: corpora of known bugs besides the engine's own
  bool noKnown = false;            // leave out the engine's shipped known bugs
  bool markKnown = false;
  bool noLearn = false;
  bool failOnNew = false;
  int64_t maxFindings = 0;
  bool noCoverage = false;
  bool firstConfigOnly = false;
  bool freshAfterFailures = false;
  std::string shard;
  int shardCount = 0;
  int jobs = 0;  // 0: the cores this process may run on
  int shrinksPerKey = 2;
  std::string report;
  double progressEvery = 0;  // 0: 1 s on a terminal, 10 s otherwise
};

// The report's settings: what a reader needs to know the campaign by.
std::vector<std::pair<std::string, std::string>> reportSettings(const FuzzOptions& o,
                                                                const CampaignOptions& c,
                                                                const std::string& configs,
                                                                int jobs) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", o.seconds);
  std::vector<std::pair<std::string, std::string>> s = {
      {"engine", o.engine.selection.backend},
      {"oracle", c.oracle},
      {"configurations", configs},
      {"nodes per model", std::to_string(o.nodes)},
      {"seed", std::to_string(o.seed) + " (case i uses seed + i)"},
      {"budget", o.cases > 0 ? std::to_string(o.cases) + " cases" : std::string(seconds) + " s"},
      {"shard", std::to_string(c.shardIndex + 1) + " of " + std::to_string(c.shardCount) +
                    " (index " + std::to_string(c.shardIndex) + ")"},
      {"jobs", std::to_string(jobs) + " worker" + (jobs == 1 ? "" : "s") + " on this machine"},
      {"corpus", o.corpus},
      {"coverage-guided", c.coverageGuided ? "yes, when the engine is instrumented" : "no"},
      {"op weights learned from rejections", c.learnUnsupported ? "yes" : "no"},
      {"shrinks per kind and op", c.shrinksPerKey ? std::to_string(c.shrinksPerKey) : "all"},
      {"nncheck", NNCHECK_VERSION}};
  if (!o.generation.dtypes.empty()) s.emplace_back("dtypes", o.generation.dtypes);
  if (!o.generation.opWeights.empty()) s.emplace_back("op weights", o.generation.opWeights);
  if (!o.generation.pairWeights.empty()) s.emplace_back("pair weights", o.generation.pairWeights);
  if (!o.generation.seeds.empty()) s.emplace_back("seed patterns", o.generation.seeds);
  if (o.generation.controlFlow) s.emplace_back("control flow", "yes");
  return s;
}

// The cores this process may run on (taskset and cgroups' cpusets narrow them).
int availableCores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
}

int fuzz(const FuzzOptions& o) {
  CampaignEngines engines;
  CampaignOptions c;
  KnownBugs known;  // what c.known holds, read once here so that a bad folder stops us now
  int jobs = o.jobs;
  try {
    if (jobs < 0 || jobs > 1024) throw Error("--jobs: expected 1 to 1024 (0: every core)");
    if (jobs == 0) jobs = availableCores();
    engines = makeCampaignEngines(o.engine);
    c.engineWithout = engines.without;
    if (!o.engine.oracle.empty()) c.oracle = o.engine.oracle;
    c.baseline = engines.baselineEngine;
    c.timeout = timeLimitFromSeconds("--timeout", o.engine.timeout);
    if (!(o.seconds > 0)) throw Error("--seconds: expected a positive number");
    if (o.cases < 0) throw Error("--cases: expected a non-negative number");
    if (o.maxFindings < 0) throw Error("--max-findings: expected a non-negative number");
    if (o.nodes < 1) throw Error("--nodes: expected a positive number");
    if (o.shrinksPerKey < 0) throw Error("--shrinks-per-key: expected a non-negative number");
    if (o.progressEvery < 0) throw Error("--progress-every: expected a positive number");
    const Shard shard = resolveShard(o.shard, o.shardCount);
    c.shardIndex = shard.index;
    c.shardCount = shard.count;
    if (!o.report.empty()) {  // checked now, not after the whole campaign
      requireReportLibrary();
      try {
        checkOutputFile(o.report);
      } catch (const Error& e) {
        throw Error(std::string("--report ") + e.what());
      }
    }
    if (!o.noKnown)
      if (std::string shipped = engineKnownBugs(o.engine.selection.backend); !shipped.empty())
        c.known.push_back(shipped);
    for (const std::string& folder : o.known) c.known.push_back(folder);
    for (const std::filesystem::path& folder : c.known) known.add(folder);
    c.generator = configFor(engines.list.front().backend->capabilities(), o.nodes);
    applyGenerationOptions(o.generation, c.generator);
  } catch (const Error& e) {
    std::cerr << "nncheck fuzz: error: " << printable(e.what()) << "\n";
    return 2;
  }
  c.seed = o.seed;
  c.seconds = o.cases > 0 ? 1e12 : o.seconds;
  c.maxCases = o.cases;
  c.corpus = o.corpus;
  c.property = "fuzz-" + o.engine.selection.backend;
  c.learnUnsupported = !o.noLearn;
  c.maxFindings = o.maxFindings;
  c.coverageGuided = !o.noCoverage;
  c.markKnownFailures = o.markKnown;
  c.roundRobin = !o.firstConfigOnly;
  c.freshAfterFailures = o.freshAfterFailures;
  c.shrinksPerKey = o.shrinksPerKey;
  const bool tty = ::isatty(STDERR_FILENO);
  std::string configs;
  for (size_t e = 0; e < (c.roundRobin ? engines.list.size() : 1); ++e)
    configs += (e ? " " : "") + engines.list[e].configuration;
  const std::string shardText = c.shardCount > 1 ? ", shard " + std::to_string(c.shardIndex + 1) +
                                                       "/" + std::to_string(c.shardCount)
                                                 : "";
  const std::string against =
      c.oracle == "reference" ? ""
      : c.baseline.backend
          ? " against the oracle " + c.oracle + " (baseline " + c.baseline.configuration + ")"
          : " against the oracle " + c.oracle;
  std::fprintf(stderr,
               "nncheck fuzz: %s (%s)%s, %d-node models, seed %llu%s, %s, %d worker%s; corpus %s\n",
               o.engine.selection.backend.c_str(), configs.c_str(), against.c_str(), o.nodes,
               static_cast<unsigned long long>(o.seed), shardText.c_str(),
               o.cases > 0 ? (std::to_string(o.cases) + " cases").c_str()
                           : (std::to_string(static_cast<int>(o.seconds)) + " s").c_str(),
               jobs, jobs == 1 ? "" : "s", o.corpus.c_str());
  if (known.size() > 0) {
    std::string folders;
    for (const std::filesystem::path& f : known.folders())
      folders += (folders.empty() ? "" : ", ") + f.string();
    std::fprintf(stderr, "  known bugs: %zu cases (%s)\n", known.size(),
                 printable(folders).c_str());
  }
  // Ctrl-C or SIGTERM: the campaign stops after its case in progress and reports what ran.
  const StopOnSignals signals;
  c.stop = [] { return stopRequested(); };
  CampaignStats s;
  {
    // Started at the first report, after the workers are forked: no thread is forked with them.
    std::optional<CampaignProgress> progress;
    try {
      s = runCampaignJobs(engines.list, c, jobs, [&](const CampaignStats& now) {
        if (!progress)
          progress.emplace(tty, o.progressEvery > 0 ? o.progressEvery : tty ? 1.0 : 10.0);
        progress->update(now);
      });
    } catch (const SetUpError& e) {
      if (progress) progress->stop();
      return reportSetUpError("fuzz", e, o.engine.selection.backend);
    } catch (const Error& e) {
      if (progress) progress->stop();
      std::cerr << "nncheck fuzz: error: " << printable(e.what()) << "\n";
      return 1;
    }
  }
  const double rate = s.cases / std::max(s.seconds, 1e-9);
  std::printf("\ncampaign: %lld cases in %.1f s (%.*f cases/s)%s\n",
              static_cast<long long>(s.cases), s.seconds, rate < 10 ? 2 : 0, rate,
              s.interrupted || stopRequested() ? "; interrupted: what ran before the stop" : "");
  std::printf(
      "  after failures %.1f s: %lld cases judged on the worker, %lld in fresh processes; "
      "each finding shrunk for at most %d runs and %.0f s\n",
      s.shrinkSeconds, static_cast<long long>(s.afterFailureJudged),
      static_cast<long long>(s.afterFailureFresh), c.shrink.steps, c.shrink.seconds);
  if (!s.afterFailureSpent.empty()) {
    const char* sep = "    ";
    for (const auto& [step, seconds] : s.afterFailureSpent) {
      std::printf("%s%s %.1f s", sep, step.c_str(), seconds);
      sep = ", ";
    }
    std::printf("\n");
  }
  std::printf("  passed %lld, unsupported %lld, nonfinite (skipped) %lld",
              static_cast<long long>(s.passed), static_cast<long long>(s.unsupported),
              static_cast<long long>(s.nonfinite));
  for (const auto& [kind, n] : s.failures)
    std::printf(", %s %lld", std::string(outcomeName(kind)).c_str(), static_cast<long long>(n));
  std::printf(
      "\n  failures not shrunk (their kind and op already shrunk): %lld; recognised before "
      "shrinking as an earlier finding: %lld; unconfirmed in a fresh process: %lld\n",
      static_cast<long long>(s.repeats), static_cast<long long>(s.recognised),
      static_cast<long long>(s.unconfirmed));
  if (!s.rejectedOps.empty()) {
    std::vector<std::pair<int64_t, std::string>> top;
    for (const auto& [op, n] : s.rejectedOps) top.push_back({-n, op});
    std::sort(top.begin(), top.end());
    std::printf("  rejected by the engine, by op:");
    for (size_t i = 0; i < top.size() && i < 8; ++i)
      std::printf(" %s %lld", top[i].second.c_str(), static_cast<long long>(-top[i].first));
    std::printf("\n");
  }
  if (s.coverage.features > 0)
    std::printf(
        "  coverage-guided: %lld features of the engine reached; %lld cases kept for new "
        "coverage; %lld cases were mutants of kept ones, %lld fresh\n",
        static_cast<long long>(s.coverage.features), static_cast<long long>(s.coverage.kept),
        static_cast<long long>(s.coverage.mutants), static_cast<long long>(s.coverage.fresh));
  else
    std::printf(
        "  coverage: none (the engine is not compiled with -fsanitize-coverage); every "
        "case generated afresh\n");
  if (!s.unreachedFunctions.empty()) std::printf("  %s\n", s.unreachedFunctions.c_str());
  if (!s.optimizations.empty() || !s.optimizationCases.empty()) {
    std::string never;
    size_t triggered = 0;
    for (const std::string& name : s.optimizations) {
      if (s.optimizationCases.count(name))
        ++triggered;
      else
        never += (never.empty() ? "" : ", ") + name;
    }
    std::vector<std::pair<int64_t, std::string>> top;
    for (const auto& [name, n] : s.optimizationCases) top.push_back({-n, name});
    std::sort(top.begin(), top.end());
    std::string most;
    for (const auto& [n, name] : top)
      most += (most.empty() ? "" : ", ") + name + " " + std::to_string(-n);
    std::printf("  optimizations triggered: %zu of %zu%s%s\n", triggered, s.optimizations.size(),
                most.empty() ? "" : " (cases: ", most.empty() ? "" : (most + ")").c_str());
    if (!never.empty()) std::printf("  optimizations never triggered: %s\n", never.c_str());
  }
  if (!s.rewriteCases.empty()) std::printf("  %s\n", describeRewriteCounts(s.rewriteCases).c_str());
  if (!s.unreadableCorpusCases.empty())
    std::printf("  saved cases that could not be read, skipped: %zu (first: %s)\n",
                s.unreadableCorpusCases.size(), s.unreadableCorpusCases.front().c_str());
  std::printf("\ndistinct failures: %zu (%d new)\n", s.findings.size(), s.newFindings());
  printFindingsByRootCause(s.findings, engines);
  if (!o.report.empty()) {
    try {
      auto settings = reportSettings(o, c, configs, jobs);
      if (s.interrupted || stopRequested())
        settings.emplace_back("stopped", "interrupted before its budget; what ran is reported");
      for (const std::string& lost : s.lostWorkers) settings.emplace_back("lost", lost);
      writeReport(o.report, campaignReport(s, settings, o.engine.selection.backend));
    } catch (const Error& e) {
      std::cerr << "nncheck fuzz: error: the report: " << printable(e.what()) << "\n";
      return 1;
    }
    std::printf("\nreport: %s\n", o.report.c_str());
  }
  for (const std::string& lost : s.lostWorkers)
    std::cerr << "nncheck fuzz: error: " << printable(lost) << "\n";
  if (stopRequested()) return 128 + stopSignal();
  if (!s.lostWorkers.empty()) return 1;
  return o.failOnNew && s.newFindings() > 0 ? 1 : 0;
}

}  // namespace

void addFuzzCommand(CLI::App& app) {
  auto o = std::make_shared<FuzzOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fuzz",
      "A time-boxed differential campaign: random models on an engine, judged by an oracle "
      "(the reference by default); failures shrunk, localized, triaged across configurations, "
      "deduplicated and "
      "saved to the corpus.");
  addCampaignEngineOptions(cmd, o->engine);
  addOracleOption(cmd, o->engine.oracle, "default: reference");
  cmd->add_option("--seconds", o->seconds, "time box")->capture_default_str();
  cmd->add_option("--cases", o->cases, "stop after this many cases instead (0: use --seconds)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the first case (case i uses seed + i)")
      ->capture_default_str();
  cmd->add_option("--nodes", o->nodes, "nodes per generated model")->capture_default_str();
  addGenerationOptions(cmd, o->generation);
  cmd->add_option("--corpus", o->corpus, "where new failures are saved")->capture_default_str();
  cmd->add_option("--known", o->known,
                  "a corpus of known bugs, repeatable: a finding with the root cause of one of its "
                  "cases is counted as that bug, not saved (the engine's own, "
                  "examples/<engine>/corpus, is consulted unless --no-known)")
      ->allow_extra_args(false);
  cmd->add_flag("--no-known", o->noKnown,
                "leave out the known bugs shipped with the engine (--known still adds others)");
  cmd->add_flag("--mark-known", o->markKnown,
                "save findings as known failures of the configurations they fail in "
                "(a corpus of open bugs that corpus replay expects to fail)");
  cmd->add_flag("--no-learn", o->noLearn,
                "keep op weights fixed (by default ops the engine rejects lose weight)");
  cmd->add_flag("--fail-on-new", o->failOnNew, "exit 1 when a new failure is found");
  cmd->add_option("--max-findings", o->maxFindings,
                  "stop once this many distinct failures are found (0: no limit; with --jobs, each "
                  "worker stops at its own count)")
      ->capture_default_str();
  cmd->add_flag("--no-coverage", o->noCoverage,
                "generate every case afresh even when the engine is compiled with "
                "-fsanitize-coverage (by default cases that reach new edges are mutated)");
  cmd->add_flag("--first-config-only", o->firstConfigOnly,
                "run every case on the first configuration, the others only triaging failures "
                "(by default cases take the configurations in turn, so each is tested)");
  cmd->add_flag("--fresh-after-failures", o->freshAfterFailures,
                "run what follows each failure (shrinking, localization, triage, the culprit "
                "search) in fresh processes, as a crash's, instead of on the worker that ran the "
                "case: an engine's start per run, for an engine whose state carries from one run "
                "or configuration to the next");
  cmd->add_option("--shard", o->shard,
                  "run shard K of N, K counting from 1 (1/4 .. 4/4): the cases i with i mod N = K "
                  "- 1, so N campaigns of "
                  "one seed run each case once between them (default: GTEST_SHARD_INDEX of "
                  "GTEST_TOTAL_SHARDS, or JOB_COMPLETION_INDEX of --shard-count, when set; "
                  "these count from 0, as they are set)");
  cmd->add_option("--shard-count", o->shardCount,
                  "the number of shards, with the shard index from JOB_COMPLETION_INDEX "
                  "(a Kubernetes Indexed Job's completions)");
  cmd->add_option("--jobs", o->jobs,
                  "worker processes, each running its own part of the cases (of this shard), "
                  "saving into one corpus and merged into one summary (0: one per core this "
                  "process may use)")
      ->capture_default_str();
  cmd->add_option("--shrinks-per-key", o->shrinksPerKey,
                  "failures of one kind at one op that are shrunk; later ones count as repeats "
                  "(0: shrink every failure, so shards find what one campaign finds)")
      ->capture_default_str();
  cmd->add_option("--report", o->report,
                  "write an HTML report of the campaign here (self-contained: settings, rate, "
                  "ops, every distinct failure with its picture)");
  cmd->add_option("--progress-every", o->progressEvery,
                  "seconds between progress lines (default: 1 on a terminal, 10 otherwise)");
  cmd->callback([o] { setExitCode(fuzz(*o)); });
}

}  // namespace nncheck::cli
