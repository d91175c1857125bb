// ONNX's backend-test layout, read and written in this one place: a case is a folder holding
//   model.onnx
//   test_data_set_<k>/input_<i>.pb    the graph inputs that are not initializers, in order
//   test_data_set_<k>/output_<i>.pb   the expected graph outputs, in order
// ONNX's node tests, nncheck's corpus and `nncheck gen` all use it. Inside a case folder and below
// a scanned folder nothing follows a symbolic link: a corpus from elsewhere (a CI artifact, a
// shared volume) must not make nncheck read, copy or print what a link in it points to.
//
//   for (const auto& dir : nncheck::findBackendTestCases("tests/corpus")) {
//     nncheck::Model m = nncheck::loadCaseModel(dir);
//     for (const auto& set : nncheck::testDataSetDirs(dir)) {
//       nncheck::TestDataSet data = nncheck::loadTestDataSet(m, set);   // inputs, outputs
//     }
//   }
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck {

struct TestDataSet {
  std::filesystem::path dir;
  TensorMap inputs;   // by graph input name
  TensorMap outputs;  // expected, by graph output name
};

// A scan's findings: every case folder (one holding model.onnx) at or below the root, sorted, and
// what the scan passed over and why ("<path>: a symbolic link, not followed"; folders nested
// past 64 levels).
struct CaseScan {
  std::vector<std::filesystem::path> cases;
  std::vector<std::string> leftOut;
};

// Folders of unfinished saves (named *.tmp.*) are no cases and not mentioned; a root given as a
// link is followed (the caller named it), links below it are not. A missing root holds none.
// Folders that vanish or cannot be read while the scan runs (a campaign saving into the corpus)
// are left out; the rest of the scan goes on, and it never throws.
CaseScan scanBackendTestCases(const std::filesystem::path& root);
// scanBackendTestCases(root).cases.
std::vector<std::filesystem::path> findBackendTestCases(const std::filesystem::path& root);

// Whether `dir` is a case folder: it holds a model.onnx entry (a link there counts, for its read
// to refuse it by name). What the scan, the corpus's saves and `nncheck show` go by.
bool isCaseFolder(const std::filesystem::path& dir);

// The case's test_data_set_<k> folders (<k> digits), sorted; links to folders are none of them.
std::vector<std::filesystem::path> testDataSetDirs(const std::filesystem::path& caseDir);

// Whether `relative`, a path inside a case folder, is one of the layout's files: model.onnx,
// test_data_set_<k>/input_<i>.pb or output_<i>.pb.
bool isBackendTestFile(const std::filesystem::path& relative);

// The case's model.onnx, read as a regular file (a link is an error naming it).
Model loadCaseModel(const std::filesystem::path& caseDir);

// One data set of a case whose model is `model`: one input_<i>.pb per graph input that is not
// an initializer, one output_<i>.pb per graph output (none at all is allowed: inputs only).
// Throws nncheck::Error naming the folder or file that is wrong, a link among them included.
TestDataSet loadTestDataSet(const Model& model, const std::filesystem::path& setDir);

// Writes model.onnx and test_data_set_0 into `caseDir` (created if missing). `outputs` may be
// empty (no expected outputs written).
void saveBackendTestCase(const std::filesystem::path& caseDir, const Model& model,
                         const TensorMap& inputs, const TensorMap& outputs);

}  // namespace nncheck
