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
#include <string>
#include <vector>

#include "nncheck/property.h"

namespace nncheck {

struct FailureInfo {
  std::string property;  // Suite.Test
  std::string backend;
  std::string configuration;
  FailureKind kind = FailureKind::Mismatch;
  std::string message;
  double maxAbsError = 0, maxRelError = 0;
  Tolerance tolerance;
  int nodesBefore = 0, nodesAfter = 0;
  int shrinkSteps = 0;
  double shrinkSeconds = 0;
  std::string firstDivergingNode;  // Divergence::describe(); empty: not localized
  // Configuration triage: configuration -> "passes", "unsupported" or the failure kind.
  std::map<std::string, std::string> triage;
  // Configuration -> failure kind this case is known to fail with (an open bug); the corpus
  // replay expects exactly that, so a fix or a new failure shows. Empty: it must pass.
  std::map<std::string, std::string> knownFailures;
  std::string pattern;  // the minimized pattern campaigns deduplicate on (see campaign.h)
};

// A 16-hex-digit hash of the model and its inputs.
std::string contentHash(const TestCase& tc);

// Saves the case with the reference's outputs; returns its folder. An existing folder with the
// same hash is kept as it is.
std::filesystem::path saveFailure(const std::filesystem::path& corpus, const std::string& property,
                                  const TestCase& tc, const FailureInfo& info);

struct CorpusCase {
  std::filesystem::path dir;
  TestCase testCase;
  std::map<std::string, std::string> knownFailures;  // from nncheck.json's known_failures
  std::string pattern;                               // from nncheck.json
};

// The folders of every case under `corpus` (recursively: a folder holding model.onnx), sorted;
// unfinished saves are left out. A missing corpus folder is empty.
std::vector<std::filesystem::path> corpusCaseDirs(const std::filesystem::path& corpus);

// Every case under `corpus`, sorted by folder; throws nncheck::Error naming a broken one.
std::vector<CorpusCase> loadCorpus(const std::filesystem::path& corpus);
CorpusCase loadCorpusCase(const std::filesystem::path& caseDir);
TestCase loadCase(const std::filesystem::path& caseDir);

}  // namespace nncheck
