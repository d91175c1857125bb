// The corpus as the harness keeps it: a failure's record made from its verdict, its pattern and
// content hash, saving once per pattern across processes, the one reader and writer of
// nncheck.json, and what replays and draws a saved case. Users read a corpus with
// nncheck/corpus.h.
//
//   nncheck::FailureInfo info = nncheck::recordFailure(verdict, minimized, divergence);
//   nncheck::SavedPattern s = nncheck::savePatternOnce("nncheck-corpus", "fuzz-ort", tc, info);
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "nncheck/corpus.h"
#include "nncheck/property.h"
#include "render/picture.h"

namespace nncheck {

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

// The folders of every case under `corpus` (recursively: a folder holding model.onnx), sorted;
// unfinished saves are left out. A missing corpus folder is empty.
std::vector<std::filesystem::path> corpusCaseDirs(const std::filesystem::path& corpus);

// A failure as its saved case reads back, without saving it: what a report shows of a finding.
CorpusCase corpusRecord(const TestCase& tc, const FailureInfo& info);

// The registered engine a campaign's finding ran on, from its property ("fuzz-opencv", or
// "reduce-ort" for `nncheck reduce`'s); "" for a property test's.
std::string campaignEngine(const std::string& property);

// The command that replays a saved case (c.dir): a campaign's finding (property fuzz-<engine>, or
// `engine` given) by `nncheck run` against the reference's saved outputs, or by `nncheck corpus
// check` for another oracle, with --engine-lib or --engine-worker for an engine a library or a
// worker serves (the one this process loaded, else a placeholder: what a case records of one is
// never printed ready to run); a property's by its test binary, which replays its saved cases
// first. Empty for a case not saved.
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

// How a saved case is drawn (render/picture.h): its first diverging node highlighted, the
// value it computes wrong and each differing graph output noted with how it differs. Saved
// cases carry this drawing as model.svg.
DrawOptions drawOptionsFor(const CorpusCase& c);

}  // namespace nncheck
