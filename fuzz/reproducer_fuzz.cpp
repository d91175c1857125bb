// libFuzzer: reproducers and issue drafts of cases whose every text is the fuzzer's (names, an
// attribute, the record's title, message, divergence, culprit, configurations, its folder). Each
// script, in every language nncheck writes, must lex as that language reads it and have the
// skeleton of the same case's script with plain text (tests/script_skeleton.h): no text of the
// case is code, ends a comment, or leaves a literal; the draft's markup must be the plain draft's.
// A writer may refuse text its language cannot hold (an nncheck::Error), never let it through.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "harness/reproducer.h"
#include "nncheck/error.h"
#include "reproduction_of_text.h"
#include "script_skeleton.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "reproducer_fuzz: %s\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nncheck;
  FuzzedDataProvider in(data, size);
  std::map<std::string, std::string> fields;
  // Each text after its field's name: names stay distinct and present (an empty name is an
  // absent input, two equal ones one value), as a case's are, whatever follows.
  const auto fuzzed = [&](const std::string& field) {
    auto it = fields.find(field);
    if (it == fields.end())
      it = fields.emplace(field, field + "_" + in.ConsumeRandomLengthString(256)).first;
    return it->second;
  };
  const auto plain = [](const std::string& field) { return field + "_plain"; };
  for (const testing::StubLanguage& language : testing::kStubLanguages) {
    std::string script;
    try {
      script = reproducerScript(testing::reproductionOfText(fuzzed, language));
    } catch (const Error&) {  // text the language cannot hold, refused
      continue;
    }
    const auto skeleton = testing::scriptSkeleton(script, language.name);
    if (!skeleton) fail("the script does not lex as its language reads it", script);
    if (*skeleton !=
        testing::scriptSkeleton(reproducerScript(testing::reproductionOfText(plain, language)),
                                language.name))
      fail("text of the case changed the script's code", script);
  }
  const ActualResult actual{.outcome = Outcome::Error, .outputs = {}, .message = fuzzed("said")};
  std::string draft;
  try {
    draft = issueDraft(testing::reproductionOfText(fuzzed, testing::kStubLanguages[0]), actual,
                       fuzzed("os"));
  } catch (const Error&) {
    return 0;
  }
  const ActualResult plainActual{
      .outcome = Outcome::Error, .outputs = {}, .message = plain("said")};
  if (testing::markdownSkeleton(draft) !=
      testing::markdownSkeleton(
          issueDraft(testing::reproductionOfText(plain, testing::kStubLanguages[0]), plainActual,
                     plain("os"))))
    fail("text of the case changed the draft's markup", draft);
  return 0;
}
