// Replaying ONNX backend-test folders (model.onnx + test_data_set_*/input_*.pb, output_*.pb)
// against the reference interpreter: ONNX's own node tests, or a corpus nncheck saved.
//
//   nncheck::ConformanceReport r =
//   nncheck::runConformance({"/usr/share/libonnx-testdata/data/node"}); std::cout << r.passed << "
//   passed, " << r.failed << " failed, " << r.skipped << " skipped\n";
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "nncheck/compare.h"
#include "nncheck/isolation.h"
#include "nncheck/outcome.h"

namespace nncheck {

struct CaseResult {
  std::filesystem::path dir;
  // Pass; Unsupported (skipped: an op, dtype or attribute the reference or the engine does
  // not take); Mismatch; Crash, Hang, Error (the engine, or an unreadable case).
  Outcome outcome = Outcome::Pass;
  std::string category;          // skips: "op not registered", "dtype", "attribute", "op version"
  std::string message;           // why it failed or was skipped
  std::vector<std::string> ops;  // distinct op types of the model, sorted
  // A model of an opset older than nncheck's: what the reader did (parseModel's `upgraded`).
  std::string upgraded;
  TensorMap outputs;  // what the engine computed for the last data set, when it ran
};

struct ConformanceReport {
  std::vector<CaseResult> cases;            // sorted by folder
  int passed = 0, failed = 0, skipped = 0;  // Pass; a failure; Unsupported
  std::vector<std::string> leftOut;  // what the scans passed over, and why (CaseScan::leftOut)
};

struct ConformanceOptions {
  Tolerance tolerance;
  // The engine to replay on, isolated; null: the reference, in this process. A model the engine
  // rejects is skipped ("rejected by the engine"); a crash or hang fails the case.
  const Isolated* engine = nullptr;
  // Called after each case, for progress or streaming output.
  std::function<void(const CaseResult&)> onCase;
};

// The node tests installed by Debian's libonnx-testdata (empty when not installed).
std::filesystem::path defaultNodeTestDir();

// Finds every test case (a folder holding model.onnx) under each path, and adds what the scans
// passed over (links, folders nested too deep) to `leftOut` when given; throws nncheck::Error
// naming a path that does not exist or holds no test case.
std::vector<std::filesystem::path> findTestCases(const std::vector<std::filesystem::path>& paths,
                                                 std::vector<std::string>* leftOut = nullptr);

// Runs one case folder.
CaseResult runTestCase(const std::filesystem::path& dir, const ConformanceOptions& options = {});

ConformanceReport runConformance(const std::vector<std::filesystem::path>& paths,
                                 const ConformanceOptions& options = {});

}  // namespace nncheck
