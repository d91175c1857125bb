// Keeping corpora: merging the corpora of several campaigns (shards, machines) into one, and
// checking that every saved case still loads and still behaves as recorded.
//
//   nncheck::MergeResult m = nncheck::mergeCorpora({"shard-0", "shard-1"}, "corpus");
//   nncheck::CorpusCheck c = nncheck::checkCorpus("corpus", {.engines = {{"fusion=on", &cv}}});
//   if (c.changed + c.broken > 0) { /* c.cases names each and what differs */ }
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "nncheck/campaign.h"

namespace nncheck {

struct MergeResult {
  int copied = 0;      // cases copied into the target
  int duplicates = 0;  // cases left out: their pattern (or content) is already there
  int marked = 0;      // cases kept that took known-failure marks from a duplicate
  // "<path>: why" for what was not copied: links (never followed), files and folders that are
  // not part of a case, folders nested too deep to search.
  std::vector<std::string> skipped;
  // Cases whose folder name (their content) is in the target already with another pattern or
  // kind in its record: left as they are, for a person to settle.
  std::vector<std::string> conflicts;
};

// Copies the cases of `from` (corpora, in order) into `into`, keeping one case per property and
// minimized pattern (a case without a pattern: per content hash). What `into` holds already
// stays and wins; among the sources, a case marked as a known failure wins over an unmarked one,
// then the first. No mark is lost: the case kept takes the known-failure marks of the duplicates
// left out. A case keeps its folder below its corpus (<property>/<hash>). Only the files of a
// case are copied, never through a link. Each copy and each rewritten record is atomic; a merge
// running at the same time into the same corpus is safe (what it copied first counts as a
// duplicate). Throws nncheck::Error naming a source that is missing, overlaps `into`, or holds a
// case that cannot be read.
MergeResult mergeCorpora(const std::vector<std::filesystem::path>& from,
                         const std::filesystem::path& into);

struct CaseCheck {
  std::filesystem::path dir;
  bool ok = true;
  std::string detail;  // what differs, or how it behaved ("mismatch at fusion=on, as recorded")
  // No configuration checked has a recorded outcome (the case was saved under another name for
  // it): the engine ran it on each anyway, and `detail` says how it behaved there.
  bool unrecorded = false;
};

struct CorpusCheck {
  std::vector<CaseCheck> cases;  // sorted by folder
  int ok = 0;
  int changed = 0;                   // loads, but behaves otherwise than recorded
  int broken = 0;                    // does not load
  int unrecorded = 0;                // of `ok`: run where nothing was recorded (CaseCheck)
  std::vector<std::string> leftOut;  // what the scan passed over, and why (CaseScan::leftOut)
};

struct CorpusCheckOptions {
  // The engine's configurations to check the cases on (each isolated, a fresh process per run);
  // none: loading and the reference only.
  std::vector<CampaignEngine> engines{};
  // The engine's name: a campaign's case of another engine (property fuzz-<other>) is checked
  // without the engines.
  std::string engineName{};
  // The engine's baseline configuration, for cases judged by an oracle that needs it.
  CampaignEngine baseline{};
  // The oracle every case is judged by (nncheck/oracle.h); empty: the one each case records.
  std::string oracle{};
  std::chrono::milliseconds timeout{10000};
  std::function<void(const CaseCheck&)> onCase{};  // called as each case is checked
};

// Checks every case under `corpus`: it loads (model, inputs, nncheck.json); the reference still
// computes its saved outputs (a case saved without outputs, which the reference does not
// compute, is not checked so); and on each engine, in each configuration the case recorded an
// outcome for (its triage, or the configuration it failed in), its oracle gives the outcome
// recorded. A case whose oracle is unknown, or needs the baseline when none is given, is reported
// as not loading, and the others are checked. Throws nncheck::Error for a missing corpus or an
// unknown o.oracle, and nncheck::SetUpError when an engine does not work here at all
// (checkEngineSetUp) before any case is checked.
CorpusCheck checkCorpus(const std::filesystem::path& corpus, const CorpusCheckOptions& o = {});

}  // namespace nncheck
