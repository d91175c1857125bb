// A reproducer never runs a case's text. Before, the header comment was split on LF only: a CR in
// a title (or U+2028 in JavaScript) ended the comment and the rest of the line ran when a
// maintainer ran the script; the issue draft took the same text as raw Markdown and HTML. Here
// every field a script or a draft takes from a case holds hostile text (tests/hostile_text.h):
// the scripts are written and run in each language nncheck writes, and must run their own code
// alone, leaving no mark; their skeletons (tests/script_skeleton.h) and the draft's markup must
// be those of the same case with plain text.
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "harness/reproducer.h"
#include "hostile_text.h"
#include "nncheck/error.h"
#include "script_skeleton.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

using testing::has;

// The engine's part of each script: run() returns the feeds, which the expected outputs equal.
struct Language {
  const char* name;
  const char* code;
};
constexpr Language kLanguages[] = {
    {"python", "def run(model_path, feeds):\n    return list(feeds.values())\n"},
    {"javascript", "async function run(modelPath, feeds) {\n  return Object.values(feeds);\n}\n"},
    {"c++",
     "std::vector<Tensor> run(const std::string&,\n"
     "                        const std::vector<std::pair<std::string, Tensor>>& feeds) {\n"
     "  return {feeds[0].second};\n}\n"},
};

// y = Identity(x), its every name and text from `text(field)`: the node's name, op attributes
// (a string value among them), the values' names, an initializer's, and the record's title,
// upstream, message, divergence and culprit.
Reproduction caseOf(const std::function<std::string(const std::string&)>& text,
                    const Language& language) {
  Reproduction r;
  Model& m = r.saved.testCase.model;
  m.opsets = {{"", 17}};
  const std::string x = text("x"), y = text("y"), node = text("node");
  m.graph.inputs = {ValueInfo::tensor(x, DType::Float32, {2})};
  Node n = Node::make("Identity", {x}, {y}, node);
  n.attributes = {Attribute::ofString(text("attribute"), text("value"))};
  m.graph.nodes = {n};
  m.graph.outputs = {ValueInfo::tensor(y, DType::Float32, {2})};
  m.graph.initializers = {{text("weight"), Tensor::fromVector<float>({1}, {3})}};
  const Tensor values = Tensor::fromVector<float>({2}, {1, -2});
  r.saved.testCase.inputs = {{x, values}};
  r.expected = {{y, values}};
  FailureInfo& info = r.saved.info;
  r.saved.kind = info.kind = Outcome::Mismatch;
  info.title = text("title");
  info.upstream = text("upstream");
  info.message = text("message");
  Divergence& d = info.divergence.emplace();
  d.name = node;
  d.opType = "Identity";
  d.output = y;
  d.detail = text("detail");
  info.culprit =
      Culprit{.needed = {text("pass")}, .workaroundPasses = true, .workaround = text("workaround")};
  r.engine = "double";
  r.configuration = text("configuration");
  r.found = text("found");
  r.triage = {{r.configuration, Outcome::Mismatch}, {text("other"), Outcome::Pass}};
  r.recipe = {.language = language.name,
              .code = language.code,
              .requirements = "nothing",
              .versions = "double 1.0"};
  r.saved.dir = text("folder");
  r.command = "nncheck repro " + text("folder") + " --backend double";
  return r;
}

// What running the script prints and returns, in its own folder.
testing::CliOutcome runScript(const fs::path& folder, const std::string& language,
                              const std::string& script) {
  if (language == "python") {
    writeFileAtomic(folder / "reproduce.py", script);
    return testing::runCommand("cd " + folder.string() + " && " NNCHECK_SDK_PYTHON " reproduce.py");
  }
  if (language == "javascript") {
    writeFileAtomic(folder / "reproduce.js", script);
    return testing::runCommand("cd " + folder.string() + " && node reproduce.js");
  }
  writeFileAtomic(folder / "reproduce.cpp", script);
  return testing::runCommand("cd " + folder.string() +
                             " && g++ -std=c++17 reproduce.cpp -o reproduce && ./reproduce");
}

#ifdef NNCHECK_SDK_PYTHON
TEST(ReproducerInjection, NoTextOfTheCaseRunsInAScriptOfAnyLanguage) {
  testing::TempDir tmp("reproducer_injection");
  const fs::path marks = tmp.path() / "marks";
  fs::create_directories(marks);
  const auto hostile = [&](const std::string& field) {
    return testing::HostileText(marks, field).value();
  };
  const auto plain = [](const std::string& field) { return "plain_" + field; };
  for (const Language& language : kLanguages) {
    SCOPED_TRACE(language.name);
    const std::string script = reproducerScript(caseOf(hostile, language));
    const fs::path folder = tmp.path() / language.name;
    fs::create_directories(folder);
    const testing::CliOutcome o = runScript(folder, language.name, script);
    EXPECT_EQ(o.status, 0) << o.output;
    EXPECT_TRUE(has(o.output, "MISMATCH") || has(o.output, ": OK")) << o.output;
    EXPECT_TRUE(fs::is_empty(marks)) << "planted code ran:\n" << o.output;
    // The same script as of a case with plain text, but for what its literals and comments hold.
    const auto skeleton = testing::scriptSkeleton(script, language.name);
    ASSERT_TRUE(skeleton) << "the script does not lex as " << language.name;
    EXPECT_EQ(*skeleton,
              testing::scriptSkeleton(reproducerScript(caseOf(plain, language)), language.name));
  }
}
#endif

TEST(ReproducerInjection, TheIssueDraftShowsTheCasesTextAndNoMarkupOfIt) {
  testing::TempDir tmp("reproducer_draft");
  const auto hostile = [&](const std::string& field) {
    return testing::HostileText(tmp.path(), field).value();
  };
  const auto plain = [](const std::string& field) { return "plain_" + field; };
  ActualResult actual{.outcome = Outcome::Error, .message = hostile("engine's message")};
  const std::string draft = issueDraft(caseOf(hostile, kLanguages[0]), actual, hostile("os"));
  const auto markup = testing::markdownSkeleton(draft);
  ASSERT_TRUE(markup) << "a fence is left open:\n" << draft;
  EXPECT_EQ(*markup, testing::markdownSkeleton(
                         issueDraft(caseOf(plain, kLanguages[0]), actual, plain("os"))))
      << draft;
  // What it holds is there to read, as text; a line's end inside it shows as an escape.
  EXPECT_TRUE(has(draft, "\\<img src=x onerror=alert(1)\\>")) << draft;
  EXPECT_FALSE(has(draft, "\r")) << draft;
}

TEST(ReproducerInjection, ANameThatIsNoUtf8IsRefusedByEveryScriptWriterButCpps) {
  testing::TempDir tmp("reproducer_utf8");
  const auto bad = [](const std::string& field) { return field == "x" ? "x\xff\xfe" : field; };
  for (const Language& language : kLanguages) {
    const Reproduction r = caseOf(bad, language);
    if (std::string(language.name) == "c++") {  // C++ holds bytes (octal escapes)
      EXPECT_TRUE(has(reproducerScript(r), "\"x\\377\\376\""));
      continue;
    }
    EXPECT_NE(testing::errorOf([&] { reproducerScript(r); }).find("is not UTF-8"),
              std::string::npos)
        << language.name;
  }
}

}  // namespace
}  // namespace nncheck
