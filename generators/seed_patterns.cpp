// Seed patterns: small models, given by a user or taken from a corpus, that generation plants
// inside random surroundings (GeneratorConfig::seeds).
#include <algorithm>

#include "core/backend_test.h"
#include "core/files.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"

namespace nncheck {
namespace fs = std::filesystem;

namespace {

// The model files of the folder `dir`: model.onnx of every case folder at or below it (a
// corpus, ONNX's node tests), and the *.onnx files right in it. Nothing below `dir` is read
// through a link (backend_test.h): a linked folder is an error naming it, a linked file is
// listed, for its read to name it.
std::vector<fs::path> modelFiles(const fs::path& dir) {
  std::error_code ec;
  const CaseScan scan = scanBackendTestCases(dir);
  if (!scan.leftOut.empty())
    throw Error(scan.leftOut.front() + " (seed folders are read without following links)");
  std::vector<fs::path> out;
  for (const fs::path& c : scan.cases) out.push_back(c / "model.onnx");
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::error_code entryError;
    const bool file = it->is_symlink(entryError) || it->is_regular_file(entryError);
    if (file && it->path().extension() == ".onnx" && it->path().filename() != "model.onnx")
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TestCase loadSeed(const fs::path& file, Links links, const GeneratorConfig& cfg) {
  TestCase tc;
  tc.model = parseModel(readFile(file, links), file.string());
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
  // A file named as the seed folder is read as named (through a link too).
  const bool named = fs::is_regular_file(dir, ec);
  std::vector<TestCase> seeds;
  for (const fs::path& file : named ? std::vector<fs::path>{dir} : modelFiles(dir)) {
    try {
      seeds.push_back(loadSeed(file, named ? Links::Follow : Links::Refuse, cfg));
    } catch (const std::exception& e) {
      throw Error(file.string() + ": not a usable seed pattern at opset " +
                  std::to_string(cfg.opset) + ": " + e.what());
    }
  }
  if (seeds.empty()) throw Error(dir.string() + ": holds no model (*.onnx) to use as a seed");
  return std::make_shared<const std::vector<TestCase>>(std::move(seeds));
}

}  // namespace nncheck
