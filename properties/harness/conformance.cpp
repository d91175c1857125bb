#include "harness/conformance.h"

#include <algorithm>
#include <set>

#include "core/backend_test.h"
#include "harness/case_files.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/property.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "ops/infer.h"

namespace nncheck {
namespace fs = std::filesystem;
fs::path defaultNodeTestDir() {
#ifdef NNCHECK_DEFAULT_NODE_TESTS
  fs::path p = NNCHECK_DEFAULT_NODE_TESTS;
  if (!p.empty() && fs::exists(p / "test_abs" / "model.onnx")) return p;
#endif
  fs::path debian = "/usr/share/libonnx-testdata/data/node";
  if (fs::exists(debian)) return debian;
  return {};
}

std::vector<fs::path> findTestCases(const std::vector<fs::path>& paths,
                                    std::vector<std::string>* leftOut) {
  std::vector<fs::path> cases;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw Error(p.string() + ": no such file or folder");
    if (!fs::is_directory(p, ec))
      throw Error(p.string() +
                  ": not a folder (expected a test case folder holding model.onnx, "
                  "or a folder of them)");
    fs::path folder = p.lexically_normal();  // "case/" names the case "case", not ""
    if (!folder.has_filename() && folder.has_parent_path()) folder = folder.parent_path();
    CaseScan scan = scanBackendTestCases(folder);
    if (leftOut) leftOut->insert(leftOut->end(), scan.leftOut.begin(), scan.leftOut.end());
    const std::vector<fs::path>& found = scan.cases;
    if (found.empty())
      throw Error(p.string() + ": holds no test case (no folder with a model.onnx)");
    cases.insert(cases.end(), found.begin(), found.end());
  }
  std::sort(cases.begin(), cases.end());
  cases.erase(std::unique(cases.begin(), cases.end()), cases.end());
  return cases;
}

CaseResult runTestCase(const fs::path& dir, const ConformanceOptions& options) {
  CaseResult r;
  r.dir = dir;
  try {
    Model model = loadSoundCaseModel(dir, &r.upgraded);
    // ONNX's converter has no adapter for some semantic changes (PRelu-7's slope broadcasting):
    // a model it upgraded into an invalid one is the converter's limit, not a failure.
    if (r.upgraded.rfind("upgraded", 0) == 0)
      if (const auto why = whyInvalid(model)) throw Error("the model is invalid: " + *why);
    std::set<std::string> ops;
    for (const Node& n : model.graph.nodes) ops.insert(n.opType);
    r.ops.assign(ops.begin(), ops.end());
    // Support is decided by the model alone, before any data file is read.
    for (const Node& n : model.graph.nodes) ops::specFor(n, model.defaultOpset());
    for (const ValueInfo& v : model.graph.inputs)
      if (!v.isTensor())
        throw Unsupported("input type", "graph input '" + v.name + "' is not a tensor");
    for (const auto* list : {&model.graph.inputs, &model.graph.outputs})
      for (const ValueInfo& v : *list)
        if (!isComputeDType(v.dtype))
          throw Unsupported("dtype", "'" + v.name + "' has dtype " +
                                         std::string(dtypeName(v.dtype)) +
                                         ", which the reference does not compute on");
    auto sets = testDataSetDirs(dir);
    if (sets.empty()) throw Error(dir.string() + ": has model.onnx but no test_data_set_* folder");
    for (const fs::path& set : sets) {
      TestDataSet data = loadTestDataSet(model, set);
      if (data.outputs.empty())
        throw Error(set.string() + ": has no output_*.pb files to compare with");
      // Inputs the model does not declare are no test of anything: an engine given them would be
      // blamed for what the case got wrong.
      try {
        checkInputs(model, data.inputs);
      } catch (const Error& e) {
        throw Unsupported("inputs", set.filename().string() + ": no test: " + e.what());
      }
      r.outputs = options.engine ? runOn(*options.engine, TestCase{model, data.inputs})
                                 : runReference(model, data.inputs);
      const TensorMap& got = r.outputs;
      for (size_t i = 0; i < model.graph.outputs.size(); ++i) {
        const std::string& name = model.graph.outputs[i].name;
        auto it = got.find(name);
        Comparison c = it == got.end()
                           ? Comparison{.ok = false, .message = "missing from the outputs"}
                           : compareTensors(it->second, data.outputs.at(name), options.tolerance);
        if (!c.ok) {
          r.outcome = Outcome::Mismatch;
          r.message = set.filename().string() + " output " + std::to_string(i) + " '" + name +
                      "': " + c.message;
          break;
        }
      }
      if (r.outcome != Outcome::Pass) break;
    }
  } catch (const Unsupported& e) {
    r.outcome = Outcome::Unsupported;
    r.category = e.category();
    r.message = e.what();
  } catch (const PropertyFailure& e) {  // the isolated engine crashed, hung or threw
    r.outcome = e.outcome();
    r.message = e.what();
  } catch (const std::exception& e) {
    // What an upgraded model breaks (its data sets were written for the old one: Scan-8's batch
    // axis) is the converter's doing, not the case's or the engine's.
    const bool upgraded = r.upgraded.rfind("upgraded", 0) == 0;
    r.outcome = upgraded ? Outcome::Unsupported : Outcome::Error;
    r.category = upgraded ? "upgrade" : "";
    r.message = upgraded ? "once " + r.upgraded + ": " + e.what() : e.what();
  }
  return r;
}

ConformanceReport runConformance(const std::vector<fs::path>& paths,
                                 const ConformanceOptions& options) {
  ConformanceReport report;
  for (const fs::path& dir : findTestCases(paths, &report.leftOut)) {
    CaseResult r = runTestCase(dir, options);
    if (r.outcome == Outcome::Pass)
      ++report.passed;
    else if (r.outcome == Outcome::Unsupported)
      ++report.skipped;
    else
      ++report.failed;
    if (options.onCase) options.onCase(r);
    report.cases.push_back(std::move(r));
  }
  return report;
}

}  // namespace nncheck
