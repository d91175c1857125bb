// A saved failure every text of which (names, an attribute, the record's title, message,
// divergence, culprit, configurations, its folder) is what `text(field)` gives, with an engine's
// part in each language nncheck writes scripts in whose run() returns its feeds: what the
// injection tests and the reproducer fuzz harness write scripts and drafts of.
//
//   for (const StubLanguage& l : kStubLanguages)
//     reproducerScript(reproductionOfText([](const std::string& f) { return f; }, l));
#pragma once

#include <functional>
#include <string>

#include "harness/reproducer.h"

namespace nncheck::testing {

// The engine's part of each script: run() returns the feeds, which the expected outputs equal.
struct StubLanguage {
  const char* name;
  const char* code;
};
inline constexpr StubLanguage kStubLanguages[] = {
    {"python", "def run(model_path, feeds):\n    return list(feeds.values())\n"},
    {"javascript", "async function run(modelPath, feeds) {\n  return Object.values(feeds);\n}\n"},
    {"c++",
     "std::vector<Tensor> run(const std::string&,\n"
     "                        const std::vector<std::pair<std::string, Tensor>>& feeds) {\n"
     "  return {feeds[0].second};\n}\n"},
};

// y = Identity(x), every name and text of it from `text(field)`.
inline Reproduction reproductionOfText(const std::function<std::string(const std::string&)>& text,
                                       const StubLanguage& language) {
  Reproduction r;
  Model& m = r.saved.testCase.model;
  m.opsets = {{"", 17}};
  const std::string x = text("x"), y = text("y"), node = text("node");
  m.graph.inputs = {ValueInfo::tensor(x, DType::Float32, {2})};
  Node n = Node::make("Identity", {x}, {y}, node);
  n.attributes = {Attribute::ofString(text("attribute"), text("value"))};
  m.graph.nodes = {n};
  m.graph.outputs = {ValueInfo::tensor(y, DType::Float32, {2})};
  m.graph.initializers = {{text("weight"), Tensor::fromVector<float>({1}, {3}), ""}};
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

}  // namespace nncheck::testing
