// A saved failure as an upstream report (`nncheck repro`): a standalone script in the engine's
// own language that uses only the engine and the case's model.onnx, writes the inputs out
// literally, compares against the reference's outputs and exits 1 while the bug is there; and an
// issue draft in Markdown. The engine gives the part that runs a model
// (EngineInfo::reproducer, nncheck/engine.h); everything else is written here.
//
//   nncheck::Reproduction r{.saved = loadCorpusCase(dir), .expected = ..., .engine = "ort",
//                           .configuration = "level=basic,threads=1", .recipe = *recipe};
//   writeFileAtomic(out / reproducerFileName(r.recipe), reproducerScript(r));
//   writeFileAtomic(out / "issue.md", issueDraft(r, actual));
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/files.h"
#include "nncheck/corpus.h"
#include "nncheck/engine.h"

namespace nncheck {

struct Reproduction {
  CorpusCase saved;                       // the case: model, inputs, its record
  TensorMap expected;                     // the reference's outputs, by name
  std::string engine;                     // as --backend names it
  std::string configuration;              // where it fails (the engine's canonical text)
  std::string found;                      // where the record says it failed (canonical), or ""
  ReproducerRecipe recipe;                // the engine's part, at that configuration
  std::map<std::string, Outcome> triage;  // every configuration's outcome, as run now
  bool triaged = true;                    // false: run at `configuration` alone (--no-triage)
  std::string baseline;                   // the engine's (EngineInfo::baseline), or ""
  std::string sharedStage;                // what its configurations share (EngineInfo), or ""
  std::string command;                    // the command that writes these again
};

// What the engine did on the case at the failing configuration, run now.
struct ActualResult {
  Outcome outcome = Outcome::Pass;
  TensorMap outputs;    // when it ran
  std::string message;  // when it failed (error, crash, hang) or differs (mismatch)
};

// "reproduce.py", "reproduce.js" or "reproduce.cpp".
std::string reproducerFileName(const ReproducerRecipe& recipe);
// How it is run (built and run, for C++) from its folder: "python3 reproduce.py".
std::string reproducerRunLine(const ReproducerRecipe& recipe);
// The issue's title in the engine's terms: what goes wrong at which op, and where.
std::string issueTitle(const Reproduction& r);
// The ONNX specification's text that decides the expected result: the failing op's summary and
// its set attributes' descriptions, with the page they are on; lines without a comment marker.
std::string specCitation(const Reproduction& r);
// The whole script; throws nncheck::Error for a language nncheck does not write.
std::string reproducerScript(const Reproduction& r);
// The issue draft: title, versions, the model as text and as a picture (model.svg beside it),
// inputs, expected and actual, the configurations that fail and pass, the culprit optimizations
// and the workaround, and the command that regenerates it.
std::string issueDraft(const Reproduction& r, const ActualResult& actual, const std::string& os);

}  // namespace nncheck
