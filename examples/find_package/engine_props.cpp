// Properties of the toy engine, written the way a compiler team writes them for its own engine:
// one TEST_P over its optimization levels, the corpus of failures replayed as tests.
#include <nncheck/gtest.h>

#include "toy_engine.h"

namespace {

class ToyEngineProps : public nncheck::PropertyTest<std::string> {};

TEST_P(ToyEngineProps, MatchesReference) {
  toy::Engine engine(GetParam());
  check(nncheck::gen::testCase(engine.capabilities()),
        [&](const nncheck::TestCase& tc) { nncheck::assertMatchesReference(engine, tc); });
}
INSTANTIATE_TEST_SUITE_P(Levels, ToyEngineProps, ::testing::Values("O0", "O1"));
// O2 carries a planted bug: disabled here, run on purpose by tests/install/find_package_test.sh.
INSTANTIATE_TEST_SUITE_P(DISABLED_KnownBug, ToyEngineProps, ::testing::Values("O2"));

NNCHECK_PROPERTY(ToyEngine, NeverCrashes, nncheck::gen::testCase(nncheck::GeneratorConfig{}), tc) {
  toy::Engine engine("O1");
  nncheck::runOn(nncheck::isolated(engine), tc);
}

// "corpus" is the folder beside this file, whatever folder the tests run from.
NNCHECK_CORPUS_TEST(ToyEngineCorpus, "corpus", [](const nncheck::TestCase& tc) {
  toy::Engine engine("O1");
  nncheck::assertMatchesReference(engine, tc);
});

}  // namespace
