// The regression corpus: each failure a folder in ONNX's backend-test layout plus nncheck.json,
// named by a content hash so the same failure is stored once. Writes are atomic (a temporary
// folder, then a rename).
//
//   <corpus>/<Suite.Test>/<hash>/model.onnx, test_data_set_0/{input,output}_*.pb, nncheck.json
//
//   auto dir = nncheck::saveFailure("tests/corpus", "MyEngine.MatchesReference", tc, info);
//   for (auto& c : nncheck::loadCorpus("tests/corpus")) { /* c.dir, c.testCase */ }
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nncheck/culprit.h"
#include "nncheck/localize.h"
#include "nncheck/outcome.h"
#include "nncheck/picture.h"
#include "nncheck/property.h"

namespace nncheck {

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
  // (nncheck/culprit.h); nullopt: not searched, or none needed.
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

// The record of a failing verdict on its minimized case: kind, message, figures, signal, first
// diverging node, ops and pattern. The caller adds who failed (property, backend,
// configuration), the shrink's figures and the triage.
FailureInfo recordFailure(const Verdict& verdict, const TestCase& minimized,
                          std::optional<Divergence> divergence);

// The minimized pattern two failures share when they are the same bug: kind (a mismatch in shape
// apart from one in values), each node's op and where its inputs come from, and the first
// diverging op: "mismatch at Relu: MatMul(x,w) Relu(#0)".
std::string failurePattern(const TestCase& tc, Outcome kind, const std::string& divergingOp,
                           bool shapeOnly = false);

// A 16-hex-digit hash of the model, its inputs and its equivalence rewrites.
std::string contentHash(const TestCase& tc);

// Saves the case with the reference's outputs; returns its folder. An existing folder with the
// same hash is kept as it is.
std::filesystem::path saveFailure(const std::filesystem::path& corpus, const std::string& property,
                                  const TestCase& tc, const FailureInfo& info);

// Saves the case unless <corpus>/<property> holds a case of its minimized pattern, across
// processes: campaigns sharing a corpus save each pattern once. The case is saved first and its
// pattern claimed after (<property>/.patterns/<hash>, naming the case), so a kill in between
// leaves a case without a claim, never a claim without its case; a claim whose case is gone is
// taken over. `dir` is the case that holds the pattern; `isNew` says whether this call saved it.
struct SavedPattern {
  std::filesystem::path dir;
  bool isNew = false;
};
SavedPattern savePatternOnce(const std::filesystem::path& corpus, const std::string& property,
                             const TestCase& tc, const FailureInfo& info);
// Saves `tc` as the case of its pattern in place of `replaced`, a case of the same pattern that
// the same campaign saved (a `--jobs` worker that got there first, while another worker's case
// came first in case order), and removes `replaced`; returns the new case's folder.
std::filesystem::path replacePatternCase(const std::filesystem::path& corpus,
                                         const std::string& property, const TestCase& tc,
                                         const FailureInfo& info,
                                         const std::filesystem::path& replaced);

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

// The folders of every case under `corpus` (recursively: a folder holding model.onnx), sorted;
// unfinished saves are left out. A missing corpus folder is empty.
std::vector<std::filesystem::path> corpusCaseDirs(const std::filesystem::path& corpus);

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
// A failure as its saved case reads back, without saving it: what a report shows of a finding.
CorpusCase corpusRecord(const TestCase& tc, const FailureInfo& info);

// The registered engine a campaign's finding ran on, from its property ("fuzz-opencv", or
// "reduce-ort" for `nncheck reduce`'s); "" for a property test's.
std::string campaignEngine(const std::string& property);

// The command that replays a saved case (c.dir): a campaign's finding (property fuzz-<engine>, or
// `engine` given) by `nncheck run` against the reference's saved outputs, or by `nncheck corpus
// check` for another oracle, with --engine-lib for a plug-in engine; a property's by its test
// binary, which replays its saved cases first. Empty for a case not saved.
std::string replayCommand(const CorpusCase& c, const std::string& engine = "");

// The one reader of nncheck.json: fills the seed and the recorded fields of `into` from the
// file's text; throws nncheck::Error naming `origin` (the file) and what is wrong.
void readCaseMetadata(const std::string& text, const std::filesystem::path& origin,
                      CorpusCase& into);
TestCase loadCase(const std::filesystem::path& caseDir);
// Adds `marks` (configuration -> outcome) to a saved case's known failures, keeping those it
// has, and rewrites its nncheck.json atomically; false when it had them all already. Throws
// nncheck::Error naming a case that cannot be read.
bool addKnownFailures(const std::filesystem::path& caseDir,
                      const std::map<std::string, Outcome>& marks);

// How a saved case is drawn (nncheck/picture.h): its first diverging node highlighted, the
// value it computes wrong and each differing graph output noted with how it differs. Saved
// cases carry this drawing as model.svg.
DrawOptions drawOptionsFor(const CorpusCase& c);

}  // namespace nncheck
