#include "nncheck/corpus.h"

#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace fs = std::filesystem;

std::string contentHash(const TestCase& tc) {
  Model m = tc.model;
  m.graph.name.clear();  // the same graph found from two seeds is one failure
  uint64_t h = fnv1a(serializeModel(m));
  for (const auto& [name, t] : tc.inputs) h = fnv1a(serializeTensor(t, name), h);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

fs::path saveFailure(const fs::path& corpus, const std::string& property, const TestCase& tc,
                     const FailureInfo& info) {
  const fs::path dir = corpus / property / contentHash(tc);
  if (fs::exists(dir / "model.onnx")) return dir;
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec)
    throw Error(dir.parent_path().string() + ": cannot create the corpus folder: " + ec.message());
  fs::path tmp = dir;
  tmp += ".tmp." + std::to_string(::getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp / "test_data_set_0");

  saveModel(tc.model, tmp / "model.onnx");
  auto feeds = tc.model.graph.feedInputs();
  for (size_t i = 0; i < feeds.size(); ++i)
    saveTensor(tc.inputs.at(feeds[i]->name), feeds[i]->name,
               tmp / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"));
  TensorMap want = runReference(tc.model, tc.inputs);
  for (size_t i = 0; i < tc.model.graph.outputs.size(); ++i) {
    const std::string& name = tc.model.graph.outputs[i].name;
    saveTensor(want.at(name), name,
               tmp / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"));
  }
  nlohmann::ordered_json j;
  j["seed"] = tc.seed;
  j["property"] = info.property;
  j["backend"] = info.backend;
  j["configuration"] = info.configuration;
  j["failure_kind"] = std::string(failureKindName(info.kind));
  j["message"] = info.message;
  j["max_abs_error"] = info.maxAbsError;
  j["max_rel_error"] = info.maxRelError;
  j["tolerance"] = {{"rtol", info.tolerance.rtol}, {"atol", info.tolerance.atol}};
  if (info.firstDivergingNode.empty())
    j["first_diverging_node"] = nullptr;
  else
    j["first_diverging_node"] = info.firstDivergingNode;
  j["triage"] = info.triage;
  j["known_failures"] = info.knownFailures;
  if (!info.pattern.empty()) j["pattern"] = info.pattern;
  j["nodes_before_shrinking"] = info.nodesBefore;
  j["nodes_after_shrinking"] = info.nodesAfter;
  j["shrink_steps"] = info.shrinkSteps;
  j["shrink_seconds"] = info.shrinkSeconds;
  j["nncheck_version"] = NNCHECK_VERSION;
  writeFileAtomic(tmp / "nncheck.json", j.dump(2) + "\n");

  fs::rename(tmp, dir, ec);
  if (ec) {
    fs::remove_all(tmp);
    if (fs::exists(dir / "model.onnx")) return dir;  // another process saved the same case
    throw Error(dir.string() + ": cannot move the saved case into place: " + ec.message());
  }
  return dir;
}

CorpusCase loadCorpusCase(const fs::path& caseDir) {
  CorpusCase c;
  c.dir = caseDir;
  TestCase& tc = c.testCase;
  tc.model = loadModel(caseDir / "model.onnx");
  auto feeds = tc.model.graph.feedInputs();
  for (size_t i = 0; i < feeds.size(); ++i)
    tc.inputs[feeds[i]->name] =
        loadTensor(caseDir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"));
  const fs::path meta = caseDir / "nncheck.json";
  if (fs::exists(meta)) {
    try {
      auto j = nlohmann::json::parse(readFile(meta));
      tc.seed = j.value("seed", uint64_t{0});
      c.knownFailures = j.value("known_failures", std::map<std::string, std::string>{});
      c.pattern = j.value("pattern", std::string());
    } catch (const nlohmann::json::exception& e) {
      throw Error(meta.string() + ": not valid nncheck metadata: " + e.what());
    }
    for (const auto& [config, kind] : c.knownFailures)
      if (kind != "mismatch" && kind != "crash" && kind != "hang" && kind != "error" &&
          kind != "nonfinite")
        throw Error(meta.string() + ": known_failures[\"" + config + "\"] = \"" + kind +
                    "\": expected mismatch, crash, hang, error or nonfinite");
  }
  return c;
}

TestCase loadCase(const fs::path& caseDir) { return loadCorpusCase(caseDir).testCase; }

std::vector<fs::path> corpusCaseDirs(const fs::path& corpus) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::exists(corpus, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(corpus); it != fs::recursive_directory_iterator();
       ++it) {
    if (!it->is_directory() || !fs::exists(it->path() / "model.onnx")) continue;
    if (it->path().filename().string().find(".tmp.") != std::string::npos)
      continue;  // an unfinished save
    out.push_back(it->path());
    it.disable_recursion_pending();
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<CorpusCase> loadCorpus(const fs::path& corpus) {
  std::vector<CorpusCase> out;
  for (const fs::path& dir : corpusCaseDirs(corpus)) out.push_back(loadCorpusCase(dir));
  return out;
}

}  // namespace nncheck
