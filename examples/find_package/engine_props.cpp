// Properties of a toy engine, written the way a compiler team writes them for its own engine.
#include <nncheck/gtest.h>

namespace {

// The engine under test: here it runs the reference, with an "optimization" switch that a real
// engine would use to pick its passes.
class ToyEngine : public nncheck::Backend {
 public:
  explicit ToyEngine(bool optimize) : optimize_(optimize) {}
  std::string name() const override { return optimize_ ? "toy-O2" : "toy-O0"; }
  nncheck::Capabilities capabilities() const override {
    nncheck::Capabilities caps;
    caps.dtypes = {nncheck::DType::Float32};
    caps.opset = 14;
    return caps;
  }
  nncheck::TensorMap run(const nncheck::Model& m, const nncheck::TensorMap& in) override {
    return nncheck::runReference(m, in);
  }

 private:
  bool optimize_;
};

class ToyEngineProps : public nncheck::PropertyTest<bool> {};

TEST_P(ToyEngineProps, MatchesReference) {
  ToyEngine engine(GetParam());
  check(nncheck::gen::testCase(engine.capabilities()), [&](const nncheck::TestCase& tc) {
    NNCHECK_ASSERT_ALLCLOSE(nncheck::runOn(nncheck::isolated(engine), tc),
                            nncheck::runOn(nncheck::reference(), tc));
  }, engine.name());
}
INSTANTIATE_TEST_SUITE_P(Optimize, ToyEngineProps, ::testing::Bool());

NNCHECK_PROPERTY(ToyEngine, NeverCrashes, nncheck::gen::testCase(nncheck::GeneratorConfig{}), tc) {
  ToyEngine engine(true);
  nncheck::runOn(nncheck::isolated(engine), tc);
}

NNCHECK_CORPUS_TEST(ToyEngineCorpus, EXAMPLE_CORPUS, [](const nncheck::TestCase& tc) {
  ToyEngine engine(true);
  NNCHECK_ASSERT_ALLCLOSE(nncheck::runOn(engine, tc), nncheck::runOn(nncheck::reference(), tc));
});

}  // namespace
