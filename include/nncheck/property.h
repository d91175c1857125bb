// What a property reports when it fails, and the assertions that report it.
//
//   TensorMap want = nncheck::reference().run(tc);
//   TensorMap got = nncheck::isolated(engine).run(tc);   // throws PropertyFailure on crash/hang
//   NNCHECK_ASSERT_ALLCLOSE(got, want);                  // throws PropertyFailure (mismatch)
#pragma once

#include <stdexcept>
#include <string>

#include "nncheck/backend.h"
#include "nncheck/compare.h"
#include "nncheck/test_case.h"

namespace nncheck {

enum class FailureKind { Mismatch, Crash, Hang, Error, NonFinite };
std::string_view failureKindName(FailureKind k);  // "mismatch", "crash", ...

class PropertyFailure : public std::runtime_error {
 public:
  PropertyFailure(FailureKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  FailureKind kind() const { return kind_; }
  // Mismatches: the worst errors over all outputs, and the tolerance they broke.
  double maxAbsError = 0, maxRelError = 0;
  Tolerance tolerance;

 private:
  FailureKind kind_;
};

// Runs a test case on the reference (in this process).
TensorMap runOn(Backend& backend, const TestCase& tc);
// Runs a test case isolated; a crash, hang or error throws PropertyFailure of that kind.
TensorMap runOn(const Isolated& engine, const TestCase& tc);

// Throws PropertyFailure(Mismatch) naming each differing output with its worst absolute and
// relative error, the tolerance and the first differing element; missing outputs too.
void assertAllClose(const TensorMap& got, const TensorMap& want, const Tolerance& tol = {});

}  // namespace nncheck

#define NNCHECK_ASSERT_ALLCLOSE(got, want, ...) \
  ::nncheck::assertAllClose((got), (want), ##__VA_ARGS__)
