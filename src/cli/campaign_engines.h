// What nncheck fuzz, reduce and corpus check share: the engine options (--backend,
// --engine-lib, --config, --timeout, --oracle), the engines they make (one per configuration; fuzz
// runs cases on each in turn, reduce on the first; all triage), and how a finding prints.
//
//   CampaignEngineOptions o;
//   addCampaignEngineOptions(cmd, o);
//   CampaignEngines e = makeCampaignEngines(o);   // e.list for runCampaign / reduceCase
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/engines.h"
#include "nncheck/campaign.h"

namespace nncheck::cli {

struct CampaignEngineOptions {
  EngineSelection selection;
  std::vector<std::string> configs;  // default: every configuration this machine has
  double timeout = 10;
  // --oracle (nncheck/oracle.h); empty: the reference, or in `corpus check` each case's own.
  std::string oracle;
};

struct CampaignEngines {
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<CampaignEngine> list;
  std::string baseline;     // EngineInfo::baseline, when it is among the configurations
  std::string sharedStage;  // EngineInfo::sharedStage: what every configuration shares, or ""
  EngineWithout without;    // for the culprit search, when the engine switches optimizations off
  // The engine's baseline configuration, made when an oracle may compare with it (then not
  // among `list`); none when the engine names no baseline.
  CampaignEngine baselineEngine{};
};

// `defaultBackend` empty: no engine unless --backend names one.
void addCampaignEngineOptions(CLI::App* cmd, CampaignEngineOptions& o,
                              const std::string& defaultBackend = "opencv");

// One engine per configuration (default: every configuration this machine has); throws
// nncheck::Error naming what is wrong. With an oracle that needs the baseline (or `anyOracle`,
// for a corpus whose cases each name theirs), the baseline configuration is made apart and left
// out of the default configurations; naming it with --config then is an error.
CampaignEngines makeCampaignEngines(const CampaignEngineOptions& o, bool anyOracle = false);

// --oracle on a subcommand; `help` says what the default is.
void addOracleOption(CLI::App* cmd, std::string& oracle, const std::string& help);

// A finding as the summary table's row i and its details, with where its fault lies as the
// triage over the engines' configurations says (harness/root_cause.h's faultStage).
void printFinding(size_t i, const Finding& f, const CampaignEngines& engines);

}  // namespace nncheck::cli
