// `nncheck repro` on a hostile copy of an engine's saved case: its every value named, and its
// record (title, upstream, message, divergence, culprit) and folder written, with hostile text
// (tests/hostile_text.h). The reproducer is written, then run with the engine, as a maintainer
// runs it: it must run its own code alone (the engine may fail on such names: then it says so),
// leave no mark, and have the skeleton (tests/script_skeleton.h) of the same case's reproducer
// with plain names. One ctest entry per engine (tests/CMakeLists.txt:
// Repro.NoCaseTextRunsInThe<Engine>Reproducer) names the engine, its language and what runs its
// scripts in NNCHECK_INJECTION_ENGINE, _LANGUAGE and _RUNNER; without them the test is skipped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "cli/cli_runner.h"
#include "core/backend_test.h"
#include "core/files.h"
#include "core/shell_words.h"
#include "harness/case_files.h"
#include "hostile_text.h"
#include "nncheck/corpus.h"
#include "script_skeleton.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::has;

// The engine's first saved case whose graph has no bodies (its values are renamed here).
fs::path flatCase(const fs::path& corpus) {
  for (const fs::path& dir : findBackendTestCases(corpus)) {
    const Model m = loadModel(dir / "model.onnx");
    bool flat = true;
    for (const Node& n : m.graph.nodes)
      for (const Attribute& a : n.attributes) flat = flat && a.graphs.empty();
    if (flat && fs::exists(dir / "nncheck.json")) return dir;
  }
  return {};
}

// The case with each value, node and the record's text renamed by `text`, saved in `into`.
fs::path renamed(const fs::path& from, const std::function<std::string(const std::string&)>& text,
                 const fs::path& into, const std::string& folder) {
  CorpusCase c = loadCorpusCase(from);
  const TensorMap expected = loadTestDataSet(c.testCase.model, from / "test_data_set_0").outputs;
  Graph& g = c.testCase.model.graph;
  std::map<std::string, std::string> names;
  const auto name = [&](const std::string& old) -> std::string {
    if (old.empty()) return old;
    auto it = names.find(old);
    if (it == names.end()) it = names.emplace(old, text("v" + std::to_string(names.size()))).first;
    return it->second;
  };
  for (ValueInfo& v : g.inputs) v.name = name(v.name);
  for (ValueInfo& v : g.outputs) v.name = name(v.name);
  for (ValueInfo& v : g.valueInfos) v.name = name(v.name);
  for (Initializer& i : g.initializers) i.name = name(i.name);
  std::string diverging;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    Node& n = g.nodes[k];
    for (std::string& in : n.inputs) in = name(in);
    for (std::string& out : n.outputs) out = name(out);
    const std::string was = n.name;
    n.name = text("node" + std::to_string(k));
    if (c.info.divergence && c.info.divergence->name == was) diverging = n.name;
  }
  TensorMap inputs, outputs;
  for (const auto& [k, t] : c.testCase.inputs) inputs[name(k)] = t;
  for (const auto& [k, t] : expected) outputs[name(k)] = t;
  c.testCase.inputs = inputs;
  FailureInfo& info = c.info;
  info.title = text("title");
  info.upstream = text("upstream");
  info.message = text("message");
  if (info.divergence) {
    info.divergence->name = diverging;
    info.divergence->output = name(info.divergence->output);
    info.divergence->detail = text("detail");
  }
  if (info.culprit) info.culprit->needed = {text("pass")};
  const fs::path dir = into / folder;
  writeCaseRecord(dir, c.testCase, info, outputs);
  return dir;
}

// The reproducer `nncheck repro` writes for the case, into `out`: its path.
fs::path reproduce(const fs::path& dir, const std::string& engine, const fs::path& out) {
  const testing::CliOutcome o =
      testing::runCli("repro " + shellQuote(dir.string()) + " --backend " + engine +
                      " --no-triage -o " + shellQuote(out.string()));
  EXPECT_EQ(o.status, 0) << o.output;
  for (const char* name : {"reproduce.py", "reproduce.js", "reproduce.cpp"})
    if (fs::exists(out / name)) return out / name;
  ADD_FAILURE() << "no reproducer in " << out << ":\n" << o.output;
  return {};
}

// How the script is run from its folder: with the runner (Python, Node.js), or as its header's
// "Run:" line says (C++: compiled first, with the engine's flags).
std::string runLine(const fs::path& script, const std::string& language,
                    const std::string& runner) {
  if (language != "c++") return runner + " " + script.filename().string();
  const std::string text = readFile(script);
  const size_t at = text.find("\n// Run: ");
  const size_t from = at + 9, to = text.find("   (exits", from);
  return at == std::string::npos ? "false" : text.substr(from, to - from);
}

TEST(ReproInjection, NoTextOfAnEnginesCaseRunsInItsReproducer) {
  const char* engine = std::getenv("NNCHECK_INJECTION_ENGINE");
  const char* language = std::getenv("NNCHECK_INJECTION_LANGUAGE");
  const char* runner = std::getenv("NNCHECK_INJECTION_RUNNER");
  if (!engine || !language || !runner)
    GTEST_SKIP() << "run per engine by the Repro.NoCaseTextRunsIn*Reproducer tests";
  const fs::path from = flatCase(fs::path(NNCHECK_SOURCE_DIR) / "examples" / engine / "corpus");
  ASSERT_FALSE(from.empty()) << "no saved case of " << engine;
  testing::TempDir tmp("repro_injection");
  const fs::path marks = tmp.path() / "marks";
  fs::create_directories(marks);
  const auto hostile = [&](const std::string& field) {
    return testing::HostileText(marks, field).value();
  };
  const auto plain = [](const std::string& field) { return "plain_" + field; };
  const fs::path script = reproduce(
      renamed(from, hostile, tmp.path() / "hostile", testing::HostileText::folderName("f")), engine,
      tmp.path() / "out");
  const fs::path benign =
      reproduce(renamed(from, plain, tmp.path() / "plain", "case"), engine, tmp.path() / "benign");
  ASSERT_FALSE(script.empty() || benign.empty());
  const testing::CliOutcome o =
      testing::runCommand("cd " + shellQuote(script.parent_path().string()) + " && " +
                          runLine(script, language, runner));
  EXPECT_TRUE(has(o.output, "output ") || has(o.output, "FAILS:"))
      << "the script did not run its own code:\n"
      << o.output;
  EXPECT_TRUE(fs::is_empty(marks)) << "planted code ran:\n" << o.output;
  for (const auto& e : fs::directory_iterator(script.parent_path()))
    EXPECT_NE(e.path().filename().string().rfind("mark-", 0), 0u)
        << "planted code ran: " << e.path();
  const auto skeleton = testing::scriptSkeleton(readFile(script), language);
  ASSERT_TRUE(skeleton) << script << " does not lex as " << language;
  EXPECT_EQ(*skeleton, testing::scriptSkeleton(readFile(benign), language));
}

}  // namespace
}  // namespace nncheck
