// The example Python optimizer (engine.py) under a GoogleTest suite, as a team writing its
// compiler in Python tests it: no C++ of theirs, the engine a WorkerBackend over its worker.
// Each configuration matches the reference; O1 agrees with O0. NNCHECK_EXAMPLE_BUG=1 plants the
// bug the suite then finds (examples/python_engine/README.md).
#include <nncheck/gtest.h>
#include <nncheck/worker_engine.h>

namespace {

nncheck::WorkerCommand worker() { return nncheck::WorkerCommand::parse(PYOPT_WORKER); }

class PyOpt : public nncheck::PropertyTest<std::string> {};

TEST_P(PyOpt, MatchesReference) {
  nncheck::WorkerBackend engine(worker(), GetParam());
  check(
      nncheck::gen::testCase(engine.capabilities()),
      [&](const nncheck::TestCase& tc) { nncheck::assertMatchesReference(engine, tc); },
      engine.name());
}

TEST_P(PyOpt, AgreesWithO0) {
  if (GetParam() == "O0") GTEST_SKIP() << "O0 is what the others agree with";
  nncheck::WorkerBackend plain(worker(), "O0"), optimized(worker(), GetParam());
  check(
      nncheck::gen::testCase(optimized.capabilities()),
      [&](const nncheck::TestCase& tc) { nncheck::assertAgree(plain, optimized, tc); },
      optimized.name());
}

INSTANTIATE_TEST_SUITE_P(Levels, PyOpt, ::testing::Values("O0", "O1"));

}  // namespace
