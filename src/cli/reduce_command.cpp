// nncheck reduce: one case (saved or hand-made) shrunk, localized and triaged against an engine,
// and saved.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/campaign_engines.h"
#include "cli/commands.h"
#include "cli/engines.h"
#include "core/deadline.h"
#include "nncheck/campaign.h"
#include "nncheck/error.h"

namespace nncheck::cli {
namespace {

struct ReduceOptions {
  CampaignEngineOptions engine;
  std::string caseDir;
  std::string corpus = "nncheck-corpus";
  bool markKnown = false;
  // One case, asked for by name, may take longer than a campaign gives each finding: an engine
  // that compiles each candidate (torch.compile, C++ kernels) runs a few a second.
  double shrinkSeconds = 300;
};

int reduce(const ReduceOptions& o) {
  CampaignEngines engines;
  CampaignOptions c;
  TestCase tc;
  try {
    const CorpusCase saved = loadCorpusCase(o.caseDir);
    if (!saved.upgraded.empty())
      std::fprintf(stderr, "nncheck reduce: %s: %s\n", printable(o.caseDir).c_str(),
                   printable(saved.upgraded).c_str());
    // A saved failure is judged by the oracle it failed against, unless --oracle says.
    CampaignEngineOptions options = o.engine;
    if (options.oracle.empty()) options.oracle = saved.oracle;
    engines = makeCampaignEngines(options);
    c.oracle = options.oracle;
    c.baseline = engines.baselineEngine;
    c.engineWithout = engines.without;
    c.timeout = timeLimitFromSeconds("--timeout", o.engine.timeout);
    tc = saved.testCase;
    // A saved failure reduces on the configuration it failed in, unless --config says.
    if (o.engine.configs.empty()) {
      const std::string& failedIn = saved.configuration;
      auto it = std::find_if(engines.list.begin(), engines.list.end(),
                             [&](const CampaignEngine& e) { return e.configuration == failedIn; });
      if (it != engines.list.end()) std::rotate(engines.list.begin(), it, it + 1);
    }
  } catch (const Error& e) {
    std::cerr << "nncheck reduce: error: " << printable(e.what()) << "\n";
    return 2;
  }
  c.corpus = o.corpus;
  c.property = "reduce-" + o.engine.selection.backend;
  c.markKnownFailures = o.markKnown;
  c.shrink.seconds = o.shrinkSeconds;
  try {
    std::optional<Finding> f = reduceCase(engines.list, tc, c);
    if (!f) {
      std::cerr << "nncheck reduce: " << printable(o.caseDir) << " does not fail on "
                << printable(engines.list.front().backend->name()) << ": nothing to reduce\n";
      return 1;
    }
    std::printf("%s, shrunk from %d to %d nodes in %d steps (%.2f s)\n",
                std::string(outcomeName(f->info.kind)).c_str(), f->info.nodesBefore,
                f->info.nodesAfter, f->info.shrinkSteps, f->info.shrinkSeconds);
    std::printf("%s\n", printable(f->info.message).c_str());
    printFinding(0, *f, engines);
    std::printf("model:\n%s", modelToText(f->minimized.model).c_str());
  } catch (const SetUpError& e) {
    return reportSetUpError("reduce", e, o.engine.selection.backend);
  } catch (const Error& e) {
    std::cerr << "nncheck reduce: error: " << printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void addReduceCommand(CLI::App& app) {
  auto o = std::make_shared<ReduceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "reduce",
      "Shrink a failing case (a folder with model.onnx and test_data_set_0/input_*.pb) against "
      "an engine, keeping its failure kind; localize, triage and save it.");
  cmd->add_option("case", o->caseDir, "the case folder")->required();
  addCampaignEngineOptions(cmd, o->engine);
  addOracleOption(cmd, o->engine.oracle, "default: the one the case records, else reference");
  cmd->add_option("--corpus", o->corpus, "where the reduced case is saved")->capture_default_str();
  cmd->add_option("--shrink-seconds", o->shrinkSeconds, "time box of the shrinking")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--mark-known", o->markKnown,
                "save it as a known failure of the configurations it fails in");
  cmd->callback([o] { setExitCode(reduce(*o)); });
}

}  // namespace nncheck::cli
