// ONNX's backend-test layout, read and written in this one place: a case is a folder holding
//   model.onnx
//   test_data_set_<k>/input_<i>.pb    the graph inputs that are not initializers, in order
//   test_data_set_<k>/output_<i>.pb   the expected graph outputs, in order
// ONNX's node tests, nncheck's corpus and `nncheck gen` all use it.
//
//   for (const auto& dir : nncheck::findBackendTestCases("tests/corpus")) {
//     nncheck::Model m = nncheck::loadModel(dir / "model.onnx");
//     for (const auto& set : nncheck::testDataSetDirs(dir)) {
//       nncheck::TestDataSet data = nncheck::loadTestDataSet(m, set);   // inputs, outputs
//     }
//   }
#pragma once

#include <filesystem>
#include <vector>

#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck {

struct TestDataSet {
  std::filesystem::path dir;
  TensorMap inputs;   // by graph input name
  TensorMap outputs;  // expected, by graph output name
};

// Every case folder (one holding model.onnx) at or below `root`, sorted; folders of unfinished
// saves (named *.tmp.*) are left out. A missing root holds none. Folders that vanish or cannot
// be read while the scan runs (a campaign saving into the corpus) are left out too; the rest of
// the scan goes on, and it never throws.
std::vector<std::filesystem::path> findBackendTestCases(const std::filesystem::path& root);

// The case's test_data_set_* folders, sorted.
std::vector<std::filesystem::path> testDataSetDirs(const std::filesystem::path& caseDir);

// One data set of a case whose model is `model`: one input_<i>.pb per graph input that is not
// an initializer, one output_<i>.pb per graph output (none at all is allowed: inputs only).
// Throws nncheck::Error naming the folder or file that is wrong.
TestDataSet loadTestDataSet(const Model& model, const std::filesystem::path& setDir);

// Writes model.onnx and test_data_set_0 into `caseDir` (created if missing). `outputs` may be
// empty (no expected outputs written).
void saveBackendTestCase(const std::filesystem::path& caseDir, const Model& model,
                         const TensorMap& inputs, const TensorMap& outputs);

}  // namespace nncheck
