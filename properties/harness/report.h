// The campaign report: one self-contained HTML page (no network when viewed) with a campaign's
// settings, its rate over time and outcome counts, op coverage and rejections by op, and every
// distinct failure with its picture, pattern, kind, error figures, triage, known/new status and
// the command that replays it. Charts are drawn by Chart.js, inlined from Debian's
// libjs-chart.js when the page is written. What `nncheck fuzz --report` and `nncheck report`
// write.
//
//   nncheck::CampaignStats s = nncheck::runCampaign(engines, o);
//   nncheck::writeReport("report.html", nncheck::campaignReport(s, settings, "opencv"));
//   nncheck::writeReport("corpus.html", nncheck::corpusReport("nncheck-corpus"));
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nncheck/campaign.h"
#include "nncheck/corpus.h"

namespace nncheck {

struct ReportFailure {
  CorpusCase record;      // as saved (record.dir empty: not saved)
  std::string rootCause;  // what the findings of one bug share (the page groups by it)
  // "new": saved by this campaign; "in the corpus"; "known failure" (marked so in its record);
  // "known bug": a campaign's finding recognised as a known case (then `known` names it)
  std::string status;
  std::optional<KnownBug> known;
  int hits = 0;        // failures of the campaign with this pattern; 0: not counted
  std::string replay;  // the command that replays it
};

struct CampaignReport {
  std::string title;
  std::vector<std::pair<std::string, std::string>> settings;  // shown in this order
  std::vector<CampaignSample> timeline;                       // empty: no plot over time
  std::vector<std::pair<std::string, int64_t>> outcomes;      // outcome -> cases
  std::map<std::string, int64_t> opCases;                     // op -> cases holding it
  std::map<std::string, int64_t> rejectedOps;                 // op -> cases rejected at it
  std::vector<ReportFailure> failures;
  // A corpus's cases that could not be read and what its scan passed over ("<path>: why"),
  // each left out of the page and listed in its settings.
  std::vector<std::string> unreadable, leftOut;
};

// The report of a campaign that ran with `settings`, against the engine registered as `engine`
// (for the replay commands). Each finding is shown from its corpus case (Finding::dir),
// saved by the campaign or already there; one not saved, from what the campaign recorded.
CampaignReport campaignReport(const CampaignStats& stats,
                              std::vector<std::pair<std::string, std::string>> settings,
                              const std::string& engine);

// The report of a corpus: its cases by kind and by op, and each case; cases that cannot be read
// (and links, which are not followed) are left out, counted in the settings and listed in
// `unreadable` and `leftOut`. Throws nncheck::Error naming a missing corpus.
CampaignReport corpusReport(const std::filesystem::path& corpus);

// The page. Throws nncheck::Error when Chart.js is not installed (requireReportLibrary).
std::string reportHtml(const CampaignReport& report);

// Writes the page atomically.
void writeReport(const std::filesystem::path& file, const CampaignReport& report);

// Throws nncheck::Error naming the file and the package when Chart.js is not installed, so a
// campaign can refuse to start rather than lose its report at the end.
void requireReportLibrary();

}  // namespace nncheck
