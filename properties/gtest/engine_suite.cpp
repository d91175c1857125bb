// EngineSuite: the pieces of a TEST_P suite over a registered engine's configurations.
#include "nncheck/engine_suite.h"

#include <algorithm>

#include "nncheck/corpus.h"
#include "nncheck/engine.h"
#include "nncheck/generator.h"
#include "nncheck/property.h"

namespace nncheck {

std::shared_ptr<Backend> EngineSuite::make(const std::string& configuration) const {
  return engines().make(engine, configuration);
}

std::string EngineSuite::baseline() const { return engines().at(engine).baseline; }

rc::Gen<TestCase> EngineSuite::cases(const std::string& configuration) const {
  Capabilities caps = make(configuration)->capabilities();
  caps.dtypes = {DType::Float32};
  // An engine that takes any op says so with no ops at all: list them, to leave some out.
  if (caps.ops.empty()) caps.ops = usableOps(GeneratorConfig{});
  const std::set<std::string> buggy = opsWithKnownFailures(corpus, configuration);
  std::erase_if(caps.ops, [&](const std::string& op) {
    return (!ops.empty() && ops.count(op) == 0) || buggy.count(op) > 0;
  });
  return gen::testCase(caps);
}

Property EngineSuite::matchesReference(const std::string& configuration) const {
  auto made = std::make_shared<std::shared_ptr<Backend>>();
  return [made, configuration, name = engine](const TestCase& tc) {
    if (!*made) *made = engines().make(name, configuration);
    assertMatchesReference(**made, tc);
  };
}

std::vector<std::pair<std::string, Property>> EngineSuite::triage() const {
  std::vector<std::pair<std::string, Property>> all;
  for (const std::string& c : configurations) all.emplace_back(c, matchesReference(c));
  return all;
}

bool EngineSuite::registerCorpusTests(const std::string& prefix) const {
  for (const std::string& c : configurations)
    ::nncheck::registerCorpusTests(prefix + "_" + testName(c), corpus, matchesReference(c), c);
  return true;
}

std::string EngineSuite::paramName(const ::testing::TestParamInfo<std::string>& info) {
  return testName(info.param);
}

std::string EngineSuite::testName(const std::string& configuration) {
  std::string name = configuration.substr(configuration.find('=') + 1);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == '+' || c == '-'; }, '_');
  return name;
}

const std::set<std::string>& visionOps() {
  static const std::set<std::string> ops = {"Add",
                                            "AveragePool",
                                            "BatchNormalization",
                                            "Concat",
                                            "Conv",
                                            "Div",
                                            "Exp",
                                            "Flatten",
                                            "Gemm",
                                            "GlobalAveragePool",
                                            "MatMul",
                                            "MaxPool",
                                            "Mul",
                                            "Relu",
                                            "Reshape",
                                            "Sigmoid",
                                            "Softmax",
                                            "Sub",
                                            "Tanh",
                                            "Transpose"};
  return ops;
}

}  // namespace nncheck
