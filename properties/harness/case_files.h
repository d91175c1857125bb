// What the harness's readers and writers of case folders share. Writers (saving a failure,
// merging corpora) make a folder atomically: a temporary folder <dir>.tmp.<pid> beside it is
// filled and renamed into place, so no reader ever sees half a case. Readers (the corpus, replay
// of backend tests) take a case's model only when its structure is sound, so that an invalid
// model from outside is never run on an engine and reported as the engine's bug.
//
//   bool made = publishCase(corpus / "S.T" / hash, [&](const fs::path& tmp) { write(tmp); });
//   Model m = loadSoundCaseModel(dir);
#pragma once

#include <filesystem>
#include <functional>

#include "nncheck/corpus.h"
#include "nncheck/graph.h"
#include "nncheck/test_case.h"

namespace nncheck {

// The case's model.onnx (loadCaseModel), checked by checkStructure; nncheck::Error naming the
// file and what is wrong (a value two nodes write, ...).
// `upgraded`, when given, says what ops::upgradeOldOpset did to a model of an older opset.
Model loadSoundCaseModel(const std::filesystem::path& caseDir, std::string* upgraded = nullptr);

// Fills a temporary folder with `fill` and renames it to `dir`. Temporaries that killed
// processes left beside it are swept first; a failing `fill` leaves nothing. False, with nothing
// made, when `dir` holds a case already, or another process renamed one there first (two
// merges into one corpus at once).
bool publishCase(const std::filesystem::path& dir,
                 const std::function<void(const std::filesystem::path&)>& fill);

// The text of nncheck.json for the case (its one writer); readCaseMetadata reads it back whole
// (CorpusCase::info). How `fuzz --jobs` workers hand back their findings, too.
std::string caseRecordText(const TestCase& tc, const FailureInfo& info);

// Writes the case into `dir` in the backend-test layout with `expected` as its outputs (none:
// no outputs), and its record as nncheck.json; returns the record's text. loadCorpusCase reads
// it all back (CorpusCase::info is the record whole). Not atomic: what publishCase fills.
std::string writeCaseRecord(const std::filesystem::path& dir, const TestCase& tc,
                            const FailureInfo& info, const TensorMap& expected = {});

}  // namespace nncheck
