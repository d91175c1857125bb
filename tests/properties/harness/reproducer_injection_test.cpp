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
#include "reproduction_of_text.h"
#include "script_skeleton.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

using testing::has;

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
  for (const testing::StubLanguage& language : testing::kStubLanguages) {
    SCOPED_TRACE(language.name);
    const std::string script = reproducerScript(testing::reproductionOfText(hostile, language));
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
              testing::scriptSkeleton(
                  reproducerScript(testing::reproductionOfText(plain, language)), language.name));
  }
}
#endif

TEST(ReproducerInjection, TheIssueDraftShowsTheCasesTextAndNoMarkupOfIt) {
  testing::TempDir tmp("reproducer_draft");
  const auto hostile = [&](const std::string& field) {
    return testing::HostileText(tmp.path(), field).value();
  };
  const auto plain = [](const std::string& field) { return "plain_" + field; };
  ActualResult actual{.outcome = Outcome::Error, .outputs = {}, .message = hostile("message")};
  const std::string draft = issueDraft(
      testing::reproductionOfText(hostile, testing::kStubLanguages[0]), actual, hostile("os"));
  const auto markup = testing::markdownSkeleton(draft);
  ASSERT_TRUE(markup) << "a fence is left open:\n" << draft;
  EXPECT_EQ(*markup, testing::markdownSkeleton(
                         issueDraft(testing::reproductionOfText(plain, testing::kStubLanguages[0]),
                                    actual, plain("os"))))
      << draft;
  // What it holds is there to read, as text; a line's end inside it shows as an escape.
  EXPECT_TRUE(has(draft, "\\<img src=x onerror=alert(1)\\>")) << draft;
  EXPECT_FALSE(has(draft, "\r")) << draft;
}

TEST(ReproducerInjection, ANameThatIsNoUtf8IsRefusedByEveryScriptWriterButCpps) {
  testing::TempDir tmp("reproducer_utf8");
  const auto bad = [](const std::string& field) { return field == "x" ? "x\xff\xfe" : field; };
  for (const testing::StubLanguage& language : testing::kStubLanguages) {
    const Reproduction r = testing::reproductionOfText(bad, language);
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
