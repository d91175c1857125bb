// The findings of a campaign by root cause (harness/root_cause.h), for its summary: the known bugs
// recognised (not saved), a line each; then the root causes seen in the corpus before; then, last,
// the new ones, each with its patterns as printFinding prints them and the command that writes
// its reproducer and issue draft.
//
//   printFindingsByRootCause(stats.findings, engines);
#pragma once

#include <string>
#include <vector>

#include "cli/campaign_engines.h"
#include "harness/after_failure.h"

namespace nncheck::cli {

void printFindingsByRootCause(const std::vector<Finding>& findings, const CampaignEngines& engines);

}  // namespace nncheck::cli
