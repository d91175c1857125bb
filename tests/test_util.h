// Helpers shared by nncheck's tests: ONNX's node tests as fixtures, temporary folders.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <set>
#include <stdexcept>
#include <vector>

#include "nncheck/backend_test.h"
#include "nncheck/conformance.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "ops/infer.h"

namespace nncheck::testing {

// A fresh folder of its own under the system's temporary folder, removed with everything in it
// when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string pattern = (std::filesystem::temp_directory_path() / ("nncheck_" + tag + "_XXXXXX"));
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::filesystem::path nodeTestDir() {
  auto d = defaultNodeTestDir();
  if (d.empty()) throw std::runtime_error("libonnx-testdata is not installed");
  return d;
}

inline std::vector<std::filesystem::path> allNodeCases() { return findTestCases({nodeTestDir()}); }

// A node test the op library supports (no skip), with its first data set's inputs.
struct NodeCase {
  std::filesystem::path dir;
  Model model;
  TensorMap inputs;
};

inline bool allOpsRegistered(const Model& m) {
  try {
    for (const Node& n : m.graph.nodes) ops::specFor(n, m.defaultOpset());
    for (const auto* list : {&m.graph.inputs, &m.graph.outputs})
      for (const ValueInfo& v : *list)
        if (!v.isTensor() || !isComputeDType(v.dtype)) return false;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

inline std::vector<NodeCase> registeredNodeCases() {
  std::vector<NodeCase> out;
  for (const auto& dir : allNodeCases()) {
    Model m = loadModel(dir / "model.onnx");
    // Also drop cases with dtypes or attribute values the specs declare unsupported.
    if (!allOpsRegistered(m) || runTestCase(dir).outcome == Outcome::Unsupported) continue;
    out.push_back({dir, m, loadTestDataSet(m, dir / "test_data_set_0").inputs});
  }
  return out;
}

}  // namespace nncheck::testing
