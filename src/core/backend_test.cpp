#include "core/backend_test.h"

#include <algorithm>

#include "core/files.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck {
namespace fs = std::filesystem;
namespace {

fs::path numbered(const fs::path& set, const char* prefix, size_t k) {
  return set / (std::string(prefix) + "_" + std::to_string(k) + ".pb");
}

// How many of <prefix>_0.pb, <prefix>_1.pb, ... exist without a gap (a link counts, so that
// reading it says what it is rather than the count coming out short).
size_t countNumbered(const fs::path& set, const char* prefix) {
  size_t k = 0;
  std::error_code ec;
  while (fs::exists(fs::symlink_status(numbered(set, prefix, k), ec))) ++k;
  return k;
}

bool isLink(const fs::path& p) {
  std::error_code ec;
  return fs::is_symlink(fs::symlink_status(p, ec));
}

// "<digits>" after `prefix` and before `suffix`, the whole of `name`.
bool isNumbered(const std::string& name, std::string_view prefix, std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

namespace {

// Saves and sweeps of a running campaign make folders come and go during a scan, so every
// filesystem call here takes an error_code, and a folder that cannot be listed (it vanished, or
// is unreadable) is left out on its own. (A recursive_directory_iterator ends the whole walk at
// the first folder it cannot open, which silently lost every case after it.) Links are not
// followed, so a link cycle cannot loop and a link cannot lead out of the tree.
void collectCases(const fs::path& dir, int depth, CaseScan& out) {
  constexpr int kMaxDepth = 64;
  std::error_code ec;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code entryError;
    if (p.filename().string().find(".tmp.") != std::string::npos) continue;  // unfinished save
    if (it->is_symlink(entryError)) {
      if (fs::is_directory(p, entryError))
        out.leftOut.push_back(p.string() + ": a symbolic link to a folder, not followed");
      continue;
    }
    if (!it->is_directory(entryError)) continue;
    if (isCaseFolder(p))
      out.cases.push_back(p);
    else if (depth < kMaxDepth)
      collectCases(p, depth + 1, out);
    else
      out.leftOut.push_back(p.string() + ": nested deeper than " + std::to_string(kMaxDepth) +
                            " folders, not searched");
  }
}

}  // namespace

CaseScan scanBackendTestCases(const fs::path& root) {
  CaseScan out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  if (isCaseFolder(root)) {
    out.cases.push_back(root);
    return out;
  }
  collectCases(root, 0, out);
  std::sort(out.cases.begin(), out.cases.end());
  std::sort(out.leftOut.begin(), out.leftOut.end());
  return out;
}

std::vector<fs::path> findBackendTestCases(const fs::path& root) {
  return scanBackendTestCases(root).cases;
}

bool isCaseFolder(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(dir / "model.onnx", ec));
}

std::vector<fs::path> testDataSetDirs(const fs::path& caseDir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (fs::directory_iterator it(caseDir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::error_code entryError;
    if (!it->is_symlink(entryError) && it->is_directory(entryError) &&
        isNumbered(it->path().filename().string(), "test_data_set_", ""))
      sets.push_back(it->path());
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

bool isBackendTestFile(const fs::path& relative) {
  const std::vector<fs::path> parts(relative.begin(), relative.end());
  if (parts.size() == 1) return parts[0] == "model.onnx";
  return parts.size() == 2 && isNumbered(parts[0].string(), "test_data_set_", "") &&
         (isNumbered(parts[1].string(), "input_", ".pb") ||
          isNumbered(parts[1].string(), "output_", ".pb"));
}

Model loadCaseModel(const fs::path& caseDir) {
  const fs::path file = caseDir / "model.onnx";
  return parseModel(readFile(file, Links::Refuse), file.string());
}

TestDataSet loadTestDataSet(const Model& model, const fs::path& setDir) {
  if (isLink(setDir))
    throw Error(setDir.string() + ": is a symbolic link, which nncheck does not follow here");
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
  auto load = [](const fs::path& file) { return loadTensor(file, nullptr, Links::Refuse); };
  for (size_t i = 0; i < feeds.size(); ++i)
    set.inputs[feeds[i]->name] = load(numbered(setDir, "input", i));
  for (size_t i = 0; i < outputs; ++i)
    set.outputs[model.graph.outputs[i].name] = load(numbered(setDir, "output", i));
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
