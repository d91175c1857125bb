// The regression corpus: each failure a folder in ONNX's backend-test layout plus nncheck.json,
// named by a content hash so the same failure is stored once. Writes are atomic (a temporary
// folder, then a rename).
//
//   <corpus>/<Suite.Test>/<hash>/model.onnx, test_data_set_0/{input,output}_*.pb, nncheck.json
//
//   for (auto& c : nncheck::loadCorpus("tests/corpus")) { /* c.dir, c.testCase, c.info */ }
//   std::set<std::string> ops = nncheck::opsWithKnownFailures("tests/corpus");
//
// What a failure's record holds and how a corpus reads back; saving, matching patterns and the
// record's one reader and writer are the harness's own (harness/corpus_store.h).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nncheck/localize.h"
#include "nncheck/outcome.h"
#include "nncheck/property.h"

namespace nncheck {

// The culprit optimizations of a finding (harness/culprit.h finds them).
struct Culprit {
  // A 1-minimal set: the case fails with only these optimizations enabled, and with any one of
  // them also switched off it passes.
  std::vector<std::string> needed;
  // Whether the case passes with `needed` switched off and every other optimization on: the
  // workaround. (Another set of optimizations may fail it too.)
  bool workaroundPasses = false;
  // The configuration with `needed` switched off, as the engine names it (set by who ran the
  // search; empty when it has no such name).
  std::string workaround{};
  int runs = 0;  // of the engine, by the search
  // How many optimizations the search chose among (0: not recorded). A set smaller than that
  // names the bug's rewrites; all of them (OpenCV's one `fusion` switch) says only that
  // optimizing is involved.
  int searched = 0;
};

struct FailureInfo {
  std::string property;              // Suite.Test
  std::string oracle = "reference";  // what it was judged against (nncheck/oracle.h)
  std::string backend;
  std::string engineLibrary;  // the plug-in library the engine came from; empty: built in
  std::string engineWorker;   // the worker command line serving the engine; empty: none
  std::string configuration;
  Outcome kind = Outcome::Mismatch;
  std::string message;
  double maxAbsError = 0, maxRelError = 0;
  Tolerance tolerance;
  double estimatedError = -1;            // Verdict::estimatedError
  int signal = 0;                        // Crash: the signal
  std::optional<Divergence> divergence;  // the first diverging node; nullopt: not localized
  std::map<std::string, std::string> differingOutputs;  // Verdict::differingOutputs
  std::vector<std::string> ops;  // the minimized model's op types, in graph order
  std::string pattern;           // what failures are deduplicated on (failurePattern)
  // How it was found: the cases run until it first showed (it included; in a campaign, the
  // campaign's case number + 1, whatever its shard) and their time, before shrinking.
  int64_t casesRun = 0;
  double secondsRun = 0;
  int nodesBefore = 0, nodesAfter = 0;
  int shrinkSteps = 0;
  double shrinkSeconds = 0;
  // Configuration triage: configuration -> its outcome on the minimized case.
  std::map<std::string, Outcome> triage;
  // Configuration -> the failure this case is known to show there (an open bug); the corpus
  // replay expects exactly that, so a fix or a new failure shows. Empty: it must pass.
  std::map<std::string, Outcome> knownFailures;
  // The optimizations the failure needs in its configuration, and the workaround
  // (harness/culprit.h); nullopt: not searched, or none needed.
  std::optional<Culprit> culprit;
  // What a person wrote about the bug, for a corpus of known bugs: a title in the engine's terms
  // and where it is reported upstream (a URL, or "none found"); empty: nothing written.
  std::string title, upstream;
};

// A saved failure that a finding is recognised as (root_cause.h in the harness matches them): its
// case and root cause, and what a person wrote about it.
struct KnownBug {
  std::filesystem::path dir;
  std::string rootCause;
  std::string title, upstream;
};

// A saved case and what its nncheck.json records (a case without one: only the folder and the
// test case).
struct CorpusCase {
  std::filesystem::path dir;
  TestCase testCase;
  std::optional<Outcome> kind;       // failure_kind
  std::string property;              // Suite.Test, or fuzz-<engine> for a campaign's finding
  std::string oracle = "reference";  // what it failed against; replay judges it so
  std::string backend;               // the engine's name as it describes itself
  std::string engineLibrary;         // engine_library: the plug-in it came from; empty: built in
  std::string engineWorker;          // engine_worker: the worker command serving it (printed only)
  std::string configuration;         // the configuration it failed in; empty: not recorded
  std::string message;
  double maxAbsError = 0, maxRelError = 0;
  double estimatedError = -1;  // estimated_float_error; -1: not estimated
  int signal = 0;
  std::map<std::string, Outcome> triage;  // configuration -> outcome on this case
  int nodesBefore = 0, nodesAfter = 0;    // around shrinking; 0: not recorded
  std::map<std::string, Outcome> knownFailures;
  std::string pattern;
  std::string divergingOp;       // first_diverging_node.op; empty: not localized
  std::string divergingOutput;   // first_diverging_node.output
  std::string divergenceDetail;  // first_diverging_node.detail: how that output differs
  std::map<std::string, std::string> differingOutputs;  // graph output -> how it differs
  std::vector<std::string> ops;                         // the model's op types
  std::optional<Culprit> culprit;                       // culprit: needed, workaround
  // A model of an older opset, as read: "upgraded from opset 6 to 13 by ONNX's version
  // converter" (or why it could not be); empty for a model taken as it is.
  std::string upgraded;
  // The whole record, every field nncheck.json holds, as the run that saved it had it (the
  // fields above are read from it): what `fuzz --jobs` workers hand back their findings in.
  FailureInfo info;
};

// Every case under `corpus`, sorted by folder; throws nncheck::Error naming a broken one.
std::vector<CorpusCase> loadCorpus(const std::filesystem::path& corpus);
CorpusCase loadCorpusCase(const std::filesystem::path& caseDir);
// The ops the known failures of `corpus` point at: the first diverging op of a mismatch, every
// op of a crash, hang or error; with a configuration, only of the failures known there. A suite
// leaves them out of its generated properties, so that it is green while those bugs are open
// and red on anything new, while the corpus pins them.
std::set<std::string> opsWithKnownFailures(const std::filesystem::path& corpus,
                                           const std::string& configuration = "");
// "fusion=off: pass; fusion=on: mismatch": a triage or known failures for people ("(default)"
// names the empty configuration).
std::string outcomesByConfiguration(const std::map<std::string, Outcome>& m);
}  // namespace nncheck
