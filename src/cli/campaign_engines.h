// What nncheck fuzz and nncheck reduce share: the engine options (--backend, --engine-lib,
// --config, --timeout), the engines they make (one per configuration; fuzz runs cases on each in
// turn, reduce on the first; all triage), and how a finding prints.
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
};

struct CampaignEngines {
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<CampaignEngine> list;
  std::string baseline;   // EngineInfo::baseline, when it is among the configurations
  EngineWithout without;  // for the culprit search, when the engine switches optimizations off
};

// `defaultBackend` empty: no engine unless --backend names one.
void addCampaignEngineOptions(CLI::App* cmd, CampaignEngineOptions& o,
                              const std::string& defaultBackend = "opencv");

// One engine per configuration (default: every configuration this machine has); throws
// nncheck::Error naming what is wrong.
CampaignEngines makeCampaignEngines(const CampaignEngineOptions& o);

// A finding as the summary table's row i and its details; with the engines' baseline, whether
// it fails there too (the engine's kernels or its adapter) or only where it optimizes.
void printFinding(size_t i, const CampaignFinding& f, const std::string& baseline);
// The findings (numbered from 1, as printFinding numbers them) whose culprits need the same
// optimizations, a line per set of two or more.
void printCulpritGroups(const std::vector<CampaignFinding>& findings);

}  // namespace nncheck::cli
