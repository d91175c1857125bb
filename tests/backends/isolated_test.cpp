#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "nncheck/backend.h"
#include "nncheck/compare.h"
#include "nncheck/error.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

Model smallModel() {
  GeneratorConfig cfg;
  cfg.nodes = 4;
  cfg.dtypes = {DType::Float32};
  return generateModel(cfg, 3);
}

// Test doubles: engines that misbehave in each way isolation must survive.
struct Misbehaving : Backend {
  enum class How { Segfault, Abort, Hang, Throw, ExitSilently } how;
  explicit Misbehaving(How h) : how(h) {}
  std::string name() const override { return "misbehaving"; }
  TensorMap run(const Model&, const TensorMap&) override {
    switch (how) {
      case How::Segfault:
        ::raise(SIGSEGV);
        break;
      case How::Abort:
        std::abort();
      case How::Hang:
        for (;;) ::pause();
      case How::Throw:
        throw std::runtime_error("engine rejects the model: Conv needs kernel_shape");
      case How::ExitSilently:
        ::_exit(3);
    }
    return {};
  }
};

TEST(Isolated, ReferenceOutputsComeBackIntact) {
  Model m = smallModel();
  TensorMap in = randomInputs(m, 3);
  RunOutcome r = isolated(reference(), 5s).run(m, in);
  ASSERT_EQ(r.kind, OutcomeKind::Ok) << r.message;
  TensorMap direct = runReference(m, in);
  ASSERT_EQ(r.outputs.size(), direct.size());
  for (const auto& [name, t] : direct) EXPECT_TRUE(r.outputs.at(name) == t) << name;
}

TEST(Isolated, ASegfaultIsACrashWithItsSignal) {
  Misbehaving engine(Misbehaving::How::Segfault);
  RunOutcome r = isolated(engine, 5s).run(smallModel(), {});
  EXPECT_EQ(r.kind, OutcomeKind::Crash);
#ifndef __SANITIZE_ADDRESS__
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
#else
  // AddressSanitizer catches the signal, reports it and exits with status 1.
  EXPECT_TRUE(r.signal == SIGSEGV || r.message.find("status 1") != std::string::npos) << r.message;
#endif
}

TEST(Isolated, AnAbortIsACrash) {
  Misbehaving engine(Misbehaving::How::Abort);
  RunOutcome r = isolated(engine, 5s).run(smallModel(), {});
  EXPECT_EQ(r.kind, OutcomeKind::Crash);
  EXPECT_EQ(r.signal, SIGABRT);
}

TEST(Isolated, AHangIsKilledAtTheTimeLimit) {
  Misbehaving engine(Misbehaving::How::Hang);
  RunOutcome r = isolated(engine, 300ms).run(smallModel(), {});
  EXPECT_EQ(r.kind, OutcomeKind::Hang);
  EXPECT_GE(r.seconds, 0.29);
  EXPECT_LT(r.seconds, 5.0);
}

TEST(Isolated, AnExceptionIsAnErrorWithItsMessage) {
  Misbehaving engine(Misbehaving::How::Throw);
  RunOutcome r = isolated(engine, 5s).run(smallModel(), {});
  EXPECT_EQ(r.kind, OutcomeKind::Error);
  EXPECT_EQ(r.message, "engine rejects the model: Conv needs kernel_shape");
}

TEST(Isolated, ExitingWithoutAResultIsACrash) {
  Misbehaving engine(Misbehaving::How::ExitSilently);
  RunOutcome r = isolated(engine, 5s).run(smallModel(), {});
  EXPECT_EQ(r.kind, OutcomeKind::Crash);
  EXPECT_NE(r.message.find("status 3"), std::string::npos) << r.message;
}

TEST(Isolated, TimeoutComesFromTheEnvironment) {
  ::setenv("NNCHECK_TIMEOUT", "0.25", 1);
  EXPECT_EQ(defaultTimeout(), 250ms);
  ::setenv("NNCHECK_TIMEOUT", "soon", 1);
  EXPECT_THROW(defaultTimeout(), Error);
  ::unsetenv("NNCHECK_TIMEOUT");
  EXPECT_EQ(defaultTimeout(), 10s);
}

}  // namespace
}  // namespace nncheck
