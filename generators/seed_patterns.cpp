// Seed patterns: small models, given by a user or taken from a corpus, that generation plants
// inside random surroundings (GeneratorConfig::seeds).
#include <algorithm>

#include "nncheck/backend_test.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"

namespace nncheck {
namespace fs = std::filesystem;

namespace {

// The model files of `dir`: model.onnx of every case folder at or below it (a corpus, ONNX's
// node tests), and the *.onnx files right in it; or `dir` itself when it is a file.
std::vector<fs::path> modelFiles(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) return {dir};
  std::vector<fs::path> out;
  for (const fs::path& c : findBackendTestCases(dir)) out.push_back(c / "model.onnx");
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::error_code entryError;
    if (it->is_regular_file(entryError) && it->path().extension() == ".onnx" &&
        it->path().filename() != "model.onnx")
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TestCase loadSeed(const fs::path& file, const GeneratorConfig& cfg) {
  TestCase tc;
  tc.model = loadModel(file);
  tc.model.opsets = {{"", cfg.opset}};
  if (tc.model.graph.name.empty()) tc.model.graph.name = file.stem().string();  // ONNX needs one
  const std::vector<fs::path> sets = file.filename() == "model.onnx"
                                         ? testDataSetDirs(file.parent_path())
                                         : std::vector<fs::path>{};
  tc.inputs = sets.empty() ? randomInputs(tc.model, 0) : loadTestDataSet(tc.model, sets[0]).inputs;
  if (tc.model.graph.nodes.empty()) throw Error("it has no node");
  checkValid(tc.model);
  // Its values must be finite, as generated models' are: searched if they are not.
  if (cfg.finiteValues && !searchValues(tc).finite)
    throw Error("no input values keep every value finite");
  runReferenceAllValues(tc.model, tc.inputs);
  return tc;
}

}  // namespace

std::shared_ptr<const std::vector<TestCase>> loadSeedPatterns(const fs::path& dir,
                                                              const GeneratorConfig& cfg) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error(dir.string() + ": no such seed folder");
  std::vector<TestCase> seeds;
  for (const fs::path& file : modelFiles(dir)) {
    try {
      seeds.push_back(loadSeed(file, cfg));
    } catch (const std::exception& e) {
      throw Error(file.string() + ": not a usable seed pattern at opset " +
                  std::to_string(cfg.opset) + ": " + e.what());
    }
  }
  if (seeds.empty()) throw Error(dir.string() + ": holds no model (*.onnx) to use as a seed");
  return std::make_shared<const std::vector<TestCase>>(std::move(seeds));
}

}  // namespace nncheck
