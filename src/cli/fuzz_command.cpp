// nncheck fuzz: a time-boxed differential campaign against an engine (nncheck/campaign.h), with
// a live progress line, a summary table and new failures saved to the corpus.
// nncheck reduce: one case (saved or hand-made) shrunk, localized and triaged against an engine.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/engines.h"
#include "nncheck/campaign.h"
#include "nncheck/error.h"

namespace nncheck::cli {
namespace {

struct EngineOptions {
  EngineSelection selection;
  std::vector<std::string> configs;  // the first runs the campaign; all are triaged
  double timeout = 10;
};

struct Engines {
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<CampaignEngine> list;
};

Engines makeEngines(const EngineOptions& o) {
  Engines e;
  std::vector<std::string> configs =
      o.configs.empty() ? engineConfigurations(o.selection) : o.configs;
  if (configs.empty()) configs = {""};
  for (const std::string& c : configs) {
    e.owned.push_back(makeEngine(o.selection, c));
    e.list.push_back({c.empty() ? o.selection.backend : c, e.owned.back().get()});
  }
  return e;
}

void addEngineOptions(CLI::App* cmd, EngineOptions& o) {
  addEngineSelection(cmd, o.selection, "opencv");
  cmd->add_option(
      "--config", o.configs,
      "engine configuration, repeatable (e.g. opencv: fusion=on|off,target=cpu|opencl); "
      "the first is run, every one is triaged; default: all this machine has");
  cmd->add_option("--timeout", o.timeout, "seconds per engine run before it counts as a hang")
      ->capture_default_str();
}

std::string triageText(const std::map<std::string, Outcome>& triage) {
  std::string s;
  for (const auto& [config, outcome] : triage)
    s += (s.empty() ? "" : "; ") + config + ": " + std::string(outcomeName(outcome));
  return s;
}

void printFinding(size_t i, const CampaignFinding& f) {
  std::printf("%3zu  %-8s %3d -> %-3d %5d  %s\n", i + 1,
              std::string(outcomeName(f.info.kind)).c_str(), f.info.nodesBefore, f.info.nodesAfter,
              f.hits, f.info.pattern.c_str());
  const std::string diverging = f.info.divergence ? f.info.divergence->describe() : "";
  if (!diverging.empty())
    std::printf("       first diverging node: %s\n",
                diverging.substr(0, diverging.find('\n')).c_str());
  std::printf("       configurations: %s\n", triageText(f.info.triage).c_str());
  if (!f.dir.empty())
    std::printf("       saved: %s\n", f.dir.c_str());
  else if (f.fromCorpus)
    std::printf("       already in the corpus\n");
}

struct FuzzOptions {
  EngineOptions engine;
  double seconds = 60;
  int64_t cases = 0;
  uint64_t seed = 1;
  int nodes = 10;
  std::string corpus = "nncheck-corpus";
  bool markKnown = false;
  bool noLearn = false;
  bool failOnNew = false;
};

int fuzz(const FuzzOptions& o) {
  Engines engines;
  CampaignOptions c;
  try {
    engines = makeEngines(o.engine);
    c.timeout = secondsOption("--timeout", o.engine.timeout);
    if (!(o.seconds > 0)) throw Error("--seconds: expected a positive number");
    if (o.cases < 0) throw Error("--cases: expected a non-negative number");
    if (o.nodes < 1) throw Error("--nodes: expected a positive number");
    c.generator = configFor(engines.list.front().backend->capabilities(), o.nodes);
    validateConfig(c.generator);
  } catch (const Error& e) {
    std::cerr << "nncheck fuzz: error: " << e.what() << "\n";
    return 2;
  }
  c.seed = o.seed;
  c.seconds = o.cases > 0 ? 1e12 : o.seconds;
  c.maxCases = o.cases;
  c.corpus = o.corpus;
  c.property = "fuzz-" + o.engine.selection.backend;
  c.learnUnsupported = !o.noLearn;
  c.markKnownFailures = o.markKnown;
  const bool tty = ::isatty(STDERR_FILENO);
  std::fprintf(stderr, "nncheck fuzz: %s (%s), %d-node models, seed %llu, %s; corpus %s\n",
               o.engine.selection.backend.c_str(), engines.list.front().configuration.c_str(),
               o.nodes, static_cast<unsigned long long>(o.seed),
               o.cases > 0 ? (std::to_string(o.cases) + " cases").c_str()
                           : (std::to_string(static_cast<int>(o.seconds)) + " s").c_str(),
               o.corpus.c_str());
  double lastLine = 0;
  auto progress = [&](const CampaignStats& s) {
    if (!tty && s.seconds - lastLine < 10) return;
    lastLine = s.seconds;
    int64_t failures = 0;
    for (const auto& [k, n] : s.failures) failures += n;
    std::fprintf(stderr,
                 "%s[%6.1fs] %lld cases (%.0f/s)  passed %lld  unsupported %lld  nonfinite %lld"
                 "  failures %lld  distinct %zu%s",
                 tty ? "\r" : "", s.seconds, static_cast<long long>(s.cases),
                 s.cases / std::max(s.seconds, 1e-9), static_cast<long long>(s.passed),
                 static_cast<long long>(s.unsupported), static_cast<long long>(s.nonfinite),
                 static_cast<long long>(failures), s.findings.size(), tty ? "   " : "\n");
  };
  CampaignStats s;
  try {
    s = runCampaign(engines.list, c, progress);
  } catch (const Error& e) {
    std::cerr << "\nnncheck fuzz: error: " << e.what() << "\n";
    return 1;
  }
  if (tty) std::fprintf(stderr, "\n");
  std::printf("\ncampaign: %lld cases in %.1f s (%.0f cases/s; shrinking %.1f s)\n",
              static_cast<long long>(s.cases), s.seconds, s.cases / std::max(s.seconds, 1e-9),
              s.shrinkSeconds);
  std::printf("  passed %lld, unsupported %lld, nonfinite (skipped) %lld",
              static_cast<long long>(s.passed), static_cast<long long>(s.unsupported),
              static_cast<long long>(s.nonfinite));
  for (const auto& [kind, n] : s.failures)
    std::printf(", %s %lld", std::string(outcomeName(kind)).c_str(), static_cast<long long>(n));
  std::printf(
      "\n  failures not shrunk (their kind and op already shrunk): %lld; "
      "unconfirmed in a fresh process: %lld\n",
      static_cast<long long>(s.repeats), static_cast<long long>(s.unconfirmed));
  if (!s.rejectedOps.empty()) {
    std::vector<std::pair<int64_t, std::string>> top;
    for (const auto& [op, n] : s.rejectedOps) top.push_back({-n, op});
    std::sort(top.begin(), top.end());
    std::printf("  rejected by the engine, by op:");
    for (size_t i = 0; i < top.size() && i < 8; ++i)
      std::printf(" %s %lld", top[i].second.c_str(), static_cast<long long>(-top[i].first));
    std::printf("\n");
  }
  std::printf("\ndistinct failures: %zu (%d new)\n", s.findings.size(), s.newFindings());
  if (!s.findings.empty()) std::printf("  #  kind     nodes     hits  pattern\n");
  for (size_t i = 0; i < s.findings.size(); ++i) printFinding(i, s.findings[i]);
  return o.failOnNew && s.newFindings() > 0 ? 1 : 0;
}

struct ReduceOptions {
  EngineOptions engine;
  std::string caseDir;
  std::string corpus = "nncheck-corpus";
  bool markKnown = false;
};

int reduce(const ReduceOptions& o) {
  Engines engines;
  CampaignOptions c;
  TestCase tc;
  try {
    engines = makeEngines(o.engine);
    c.timeout = secondsOption("--timeout", o.engine.timeout);
    tc = loadCase(o.caseDir);
  } catch (const Error& e) {
    std::cerr << "nncheck reduce: error: " << e.what() << "\n";
    return 2;
  }
  c.corpus = o.corpus;
  c.property = "reduce-" + o.engine.selection.backend;
  c.markKnownFailures = o.markKnown;
  try {
    std::optional<CampaignFinding> f = reduceCase(engines.list, tc, c);
    if (!f) {
      std::cerr << "nncheck reduce: " << o.caseDir << " does not fail on "
                << engines.list.front().backend->name() << ": nothing to reduce\n";
      return 1;
    }
    f->dir = saveFinding(*f, c);
    std::printf("%s, shrunk from %d to %d nodes in %d steps (%.2f s)\n",
                std::string(outcomeName(f->info.kind)).c_str(), f->info.nodesBefore,
                f->info.nodesAfter, f->info.shrinkSteps, f->info.shrinkSeconds);
    std::printf("%s\n", f->info.message.c_str());
    printFinding(0, *f);
    std::printf("model:\n%s", modelToText(f->minimized.model).c_str());
  } catch (const Error& e) {
    std::cerr << "nncheck reduce: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void addFuzzCommand(CLI::App& app) {
  auto o = std::make_shared<FuzzOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fuzz",
      "A time-boxed differential campaign: random models on an engine, compared with the "
      "reference; failures shrunk, localized, triaged across configurations, deduplicated and "
      "saved to the corpus.");
  addEngineOptions(cmd, o->engine);
  cmd->add_option("--seconds", o->seconds, "time box")->capture_default_str();
  cmd->add_option("--cases", o->cases, "stop after this many cases instead (0: use --seconds)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the first case (case i uses seed + i)")
      ->capture_default_str();
  cmd->add_option("--nodes", o->nodes, "nodes per generated model")->capture_default_str();
  cmd->add_option("--corpus", o->corpus, "where new failures are saved")->capture_default_str();
  cmd->add_flag("--mark-known", o->markKnown,
                "save findings as known failures of the configurations they fail in "
                "(a corpus of open bugs that corpus replay expects to fail)");
  cmd->add_flag("--no-learn", o->noLearn,
                "keep op weights fixed (by default ops the engine rejects lose weight)");
  cmd->add_flag("--fail-on-new", o->failOnNew, "exit 1 when a new failure is found");
  cmd->callback([o] { setExitCode(fuzz(*o)); });
}

void addReduceCommand(CLI::App& app) {
  auto o = std::make_shared<ReduceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "reduce",
      "Shrink a failing case (a folder with model.onnx and test_data_set_0/input_*.pb) against "
      "an engine, keeping its failure kind; localize, triage and save it.");
  cmd->add_option("case", o->caseDir, "the case folder")->required();
  addEngineOptions(cmd, o->engine);
  cmd->add_option("--corpus", o->corpus, "where the reduced case is saved")->capture_default_str();
  cmd->add_flag("--mark-known", o->markKnown,
                "save it as a known failure of the configurations it fails in");
  cmd->callback([o] { setExitCode(reduce(*o)); });
}

}  // namespace nncheck::cli
