#include "nncheck/backend_test.h"

#include <algorithm>

#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck {
namespace fs = std::filesystem;
namespace {

fs::path numbered(const fs::path& set, const char* prefix, size_t k) {
  return set / (std::string(prefix) + "_" + std::to_string(k) + ".pb");
}

// How many of <prefix>_0.pb, <prefix>_1.pb, ... exist without a gap.
size_t countNumbered(const fs::path& set, const char* prefix) {
  size_t k = 0;
  while (fs::exists(numbered(set, prefix, k))) ++k;
  return k;
}

}  // namespace

namespace {

// Saves and sweeps of a running campaign make folders come and go during a scan, so every
// filesystem call here takes an error_code, and a folder that cannot be listed (it vanished, or
// is unreadable) is left out on its own. (A recursive_directory_iterator ends the whole walk at
// the first folder it cannot open, which silently lost every case after it.) Symlinked folders
// count as cases but are not descended into, so a link cycle cannot loop.
void collectCases(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  constexpr int kMaxDepth = 64;
  std::error_code ec;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code entryError;
    if (!it->is_directory(entryError)) continue;
    if (p.filename().string().find(".tmp.") != std::string::npos) continue;  // unfinished save
    if (fs::exists(p / "model.onnx", entryError))
      out.push_back(p);
    else if (!it->is_symlink(entryError) && depth < kMaxDepth)
      collectCases(p, depth + 1, out);
  }
}

}  // namespace

std::vector<fs::path> findBackendTestCases(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  if (fs::exists(root / "model.onnx", ec)) return {root};
  collectCases(root, 0, out);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> testDataSetDirs(const fs::path& caseDir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (fs::directory_iterator it(caseDir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::error_code entryError;
    if (it->is_directory(entryError) &&
        it->path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(it->path());
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

TestDataSet loadTestDataSet(const Model& model, const fs::path& setDir) {
  const auto feeds = model.graph.feedInputs();
  const size_t inputs = countNumbered(setDir, "input");
  const size_t outputs = countNumbered(setDir, "output");
  if (inputs != feeds.size())
    throw Error(setDir.string() + ": has " + std::to_string(inputs) +
                " input_*.pb files, the model has " + std::to_string(feeds.size()) +
                " graph inputs");
  if (outputs != 0 && outputs != model.graph.outputs.size())
    throw Error(setDir.string() + ": has " + std::to_string(outputs) +
                " output_*.pb files, the model has " + std::to_string(model.graph.outputs.size()) +
                " graph outputs");
  TestDataSet set;
  set.dir = setDir;
  for (size_t i = 0; i < feeds.size(); ++i)
    set.inputs[feeds[i]->name] = loadTensor(numbered(setDir, "input", i));
  for (size_t i = 0; i < outputs; ++i)
    set.outputs[model.graph.outputs[i].name] = loadTensor(numbered(setDir, "output", i));
  return set;
}

void saveBackendTestCase(const fs::path& caseDir, const Model& model, const TensorMap& inputs,
                         const TensorMap& outputs) {
  const fs::path set = caseDir / "test_data_set_0";
  std::error_code ec;
  fs::create_directories(set, ec);
  if (ec) throw Error(set.string() + ": cannot create the folder: " + ec.message());
  saveModel(model, caseDir / "model.onnx");
  const auto feeds = model.graph.feedInputs();
  for (size_t i = 0; i < feeds.size(); ++i) {
    auto it = inputs.find(feeds[i]->name);
    if (it == inputs.end())
      throw Error(caseDir.string() + ": no value for graph input '" + feeds[i]->name + "'");
    saveTensor(it->second, feeds[i]->name, numbered(set, "input", i));
  }
  if (outputs.empty()) return;
  for (size_t i = 0; i < model.graph.outputs.size(); ++i) {
    const std::string& name = model.graph.outputs[i].name;
    auto it = outputs.find(name);
    if (it == outputs.end())
      throw Error(caseDir.string() + ": no value for graph output '" + name + "'");
    saveTensor(it->second, name, numbered(set, "output", i));
  }
}

}  // namespace nncheck
