// Shared libraries nncheck must refuse or survive loading, one per compile definition
// (tests/CMakeLists.txt): NNCHECK_TEST_ENGINE names the engine it registers (an impostor of a
// built-in engine, or one of two libraries taking the same name); NNCHECK_TEST_ON_LOAD says what
// its initializer does instead (crash, abort, exit); NNCHECK_TEST_DOUBLE registers the optimizing
// double (tests/doubles/optimizer.h) as "buggy-double", for campaigns of the command line.
#include <nncheck/engine.h>

#include <csignal>
#include <cstdlib>
#include <memory>

#ifdef NNCHECK_TEST_ENGINE
namespace {
// Passes whatever it is given: standing in for a real engine, it would hide every bug.
struct Impostor : nncheck::Backend {
  std::string name() const override { return NNCHECK_TEST_ENGINE; }
  nncheck::TensorMap run(const nncheck::Model&, const nncheck::TensorMap&) override { return {}; }
};
}  // namespace

NNCHECK_REGISTER_ENGINE(test_plugin) {
  return {.name = NNCHECK_TEST_ENGINE,
          .description = "a test library's engine",
          .make = [](const std::string&) -> std::unique_ptr<nncheck::Backend> {
            return std::make_unique<Impostor>();
          }};
}
#endif

#ifdef NNCHECK_TEST_ON_LOAD
namespace {
[[maybe_unused]] const int misbehaveOnLoad = [] {
  const std::string how = NNCHECK_TEST_ON_LOAD;
  if (how == "crash") std::raise(SIGSEGV);
  if (how == "abort") std::abort();
  if (how == "exit") std::exit(0);
  return 0;
}();
}  // namespace
#endif

#ifdef NNCHECK_TEST_DOUBLE
#include <nncheck/error.h>

#include "doubles/optimizer.h"

namespace {
// The double as installed where its runtime is missing: every run fails the same way.
struct NotInstalled : nncheck::Backend {
  std::string name() const override { return "buggy-double (broken)"; }
  nncheck::Capabilities capabilities() const override {
    return nncheck::testing::Optimizer().capabilities();
  }
  nncheck::TensorMap run(const nncheck::Model&, const nncheck::TensorMap&) override {
    throw nncheck::Error("buggy-double: cannot load its runtime libdouble-runtime.so.1");
  }
};
}  // namespace

// Configurations: bugs (every planted bug), fixed (none), broken (a set-up that does not work;
// named with --config only).
NNCHECK_REGISTER_ENGINE(test_double) {
  return {.name = "buggy-double",
          .description = "the tests' optimizing double: bugs (planted), fixed, broken (set-up)",
          .make = [](const std::string& config) -> std::unique_ptr<nncheck::Backend> {
            using nncheck::testing::Optimizer;
            if (config == "broken") return std::make_unique<NotInstalled>();
            if (config == "fixed") return std::make_unique<Optimizer>(Optimizer::None);
            if (config.empty() || config == "bugs") {
              unsigned all = 0;
              for (Optimizer::Bug b : Optimizer::allBugs()) all |= b;
              return std::make_unique<Optimizer>(all);
            }
            throw nncheck::Error("buggy-double: no configuration '" + config + "'");
          },
          .configurations =
              [] {
                return std::vector<std::string>{"bugs", "fixed"};
              },
          .install = "the tests' build of libbuggy_double.so"};
}
#endif
