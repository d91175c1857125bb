// Helpers shared by nncheck's tests: ONNX's node tests as fixtures, temporary folders.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/backend_test.h"
#include "harness/conformance.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "ops/infer.h"
#include "ops/upgrade.h"

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
    ops::upgradeOldOpset(m);  // as runTestCase runs it
    // Also drop cases with dtypes or attribute values the specs declare unsupported.
    if (!allOpsRegistered(m) || runTestCase(dir).outcome == Outcome::Unsupported) continue;
    out.push_back({dir, m, loadTestDataSet(m, dir / "test_data_set_0").inputs});
  }
  return out;
}

// A valid model whose run never ends in practice: a Loop of `trips` iterations whose body runs
// another Loop of `trips` iterations, carrying x (float32[1]) through to y. Node names: 'outer',
// 'inner'.
inline Model nestedLoops(int64_t trips) {
  auto loop = [](const std::string& name, std::optional<Node> inner) {
    Graph body;
    body.name = name + "_body";
    body.inputs = {ValueInfo::tensor(name + "_i", DType::Int64, {}),
                   ValueInfo::tensor(name + "_c", DType::Bool, {}),
                   ValueInfo::tensor(name + "_s", DType::Float32, {1})};
    body.nodes = {Node::make("Identity", {name + "_c"}, {name + "_c_out"})};
    Node step = inner ? *inner : Node::make("Identity", {""}, {""});
    step.inputs.back() = name + "_s";
    step.outputs[0] = name + "_s_out";
    body.nodes.push_back(step);
    body.outputs = {ValueInfo::tensor(name + "_c_out", DType::Bool, {}),
                    ValueInfo::tensor(name + "_s_out", DType::Float32, {1})};
    Node n = Node::make("Loop", {"M", "", "x"}, {"y"}, name);
    n.attributes = {Attribute::ofGraph("body", body)};
    return n;
  };
  Model m;
  m.opsets = {{"", 16}};
  m.graph.name = "nested_loops";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1})};
  m.graph.initializers = {{"M", Tensor::scalar<int64_t>(trips), ""}};
  m.graph.nodes = {loop("outer", loop("inner", std::nullopt))};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1})};
  return m;
}

// v0 -> Neg -> v1 -> ... -> Neg -> v<n>: a valid model of `n` nodes, as long as a test needs.
inline Model negChain(int n) {
  auto value = [](int i) {
    std::string name = "v";  // (not "v" + to_string: GCC 12 warns falsely, -Wrestrict)
    name += std::to_string(i);
    return name;
  };
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "chain";
  m.graph.inputs = {ValueInfo::tensor("v0", DType::Float32, {2})};
  for (int i = 0; i < n; ++i)
    m.graph.nodes.push_back(Node::make("Neg", {value(i)}, {value(i + 1)}));
  m.graph.outputs = {ValueInfo::tensor(value(n), DType::Float32, {2})};
  return m;
}

// The message of the nncheck::Error `f` throws, or "(no error)".
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// An invalid model: Relu 'first' and Neg 'second' both write 'y'.
inline Model oneValueWrittenTwice() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "twice";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2})};
  m.graph.nodes = {Node::make("Relu", {"x"}, {"y"}, "first"),
                   Node::make("Neg", {"x"}, {"y"}, "second")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2})};
  return m;
}

// Whether `part` occurs in `text`.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether `name` is one of `names` (an engine's configurations, optimizations, ops).
inline bool named(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

inline ValueInfo f32(std::string name, const Shape& s) {
  return ValueInfo::tensor(std::move(name), DType::Float32, s);
}

// The input of the engine tests' small models: x, 2x3 float32, with both signs and fractions.
inline const TensorMap kInputX2x3 = {
    {"x", Tensor::fromVector<float>({2, 3}, {-1, 0.5f, 2, -3, 4, -0.25f})}};

}  // namespace nncheck::testing
