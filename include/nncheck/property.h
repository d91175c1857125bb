// What a property reports when it fails, and the property library: the assertions that report
// it. Tolerances and the NaN/Inf policy are those of nncheck/tolerance.h.
//
//   nncheck::assertMatchesReference(nncheck::isolated(engine), tc);  // allclose, localized
//   nncheck::assertAgree(nncheck::isolated(fused), nncheck::isolated(unfused), tc);
//   nncheck::assertDeterministic(nncheck::isolated(engine), tc);     // identical bits twice
//   NNCHECK_ASSERT_ALLCLOSE(got, want);   // the building block: throws PropertyFailure
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "nncheck/isolation.h"
#include "nncheck/compare.h"
#include "nncheck/localize.h"
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
  // Mismatches against the reference: finds the first diverging node. It costs engine runs, so
  // check() calls it once, on the shrunk case.
  std::function<std::optional<Divergence>()> localize;

 private:
  FailureKind kind_;
};

// Runs a test case on the reference (in this process).
TensorMap runOn(Backend& backend, const TestCase& tc);
// Runs a test case isolated; a crash, hang or error throws PropertyFailure of that kind, a
// model the engine rejects throws nncheck::Unsupported (check() counts it, it is no failure).
TensorMap runOn(const Isolated& engine, const TestCase& tc);

// Throws PropertyFailure(Mismatch) naming each differing output with its worst absolute and
// relative error, the tolerance and the first differing element; missing outputs too.
void assertAllClose(const TensorMap& got, const TensorMap& want, const Tolerance& tol = {});

// The engine's outputs are allclose to the reference's (toleranceFor(model)). A case whose
// reference computes NaN or Inf anywhere throws nncheck::Unsupported ("nonfinite"): not a test.
// A mismatch carries a localizer, which runs the engine again after check() has shrunk the
// case: the engine must outlive the check() call.
void assertMatchesReference(const Isolated& engine, const TestCase& tc);

// Two engines, or two configurations of one (fused and unfused, CPU and OpenCL), agree within
// the tolerance policy. Either one rejecting the model throws nncheck::Unsupported.
void assertAgree(const Isolated& a, const Isolated& b, const TestCase& tc);

// Two runs of the engine give bit-identical outputs.
void assertDeterministic(const Isolated& engine, const TestCase& tc);

}  // namespace nncheck

#define NNCHECK_ASSERT_ALLCLOSE(got, want, ...) \
  ::nncheck::assertAllClose((got), (want), ##__VA_ARGS__)
