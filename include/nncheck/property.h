// What a property reports when it fails, and the property library: the assertions that report
// it. Tolerances and the NaN/Inf policy are those of nncheck/tolerance.h. Each assertion takes
// the engine itself and runs it isolated, in one persistent worker per engine for the whole
// check() (an EngineScope), so a crash or hang is a failure, not a dead runner, at the cost of
// one run, not one process, per case.
//
//   nncheck::assertMatchesReference(engine, tc);   // allclose to the reference, localized
//   nncheck::assertAgree(fused, unfused, tc);      // two engines or configurations agree
//   nncheck::assertDeterministic(engine, tc);      // identical bits twice
//   nncheck::assertMatchesBaseline(o2, o0, tc);    // as its own baseline, no reference
//   nncheck::assertEquivalentVariantsAgree(e, tc); // the model and its rewritten variant agree
//   nncheck::assertAllClose(got, want, tol);       // the building block: throws PropertyFailure
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "nncheck/compare.h"
#include "nncheck/error.h"
#include "nncheck/isolation.h"
#include "nncheck/localize.h"
#include "nncheck/outcome.h"
#include "nncheck/test_case.h"

namespace nncheck {

// A property: throws PropertyFailure when the case shows a bug, nncheck::Unsupported when the
// case is no test of the engine, and returns when the property holds.
using Property = std::function<void(const TestCase&)>;

// The verdict of a property on one case: its outcome and what a report needs.
struct Verdict {
  Outcome outcome = Outcome::Pass;
  std::string message{};   // failures, Unsupported, NonFinite: what happened
  std::string category{};  // Unsupported: nncheck::Unsupported::category()
  double maxAbsError = 0;  // Mismatch
  double maxRelError = 0;
  Tolerance tolerance{};
  // Mismatch, after the float error estimate (nncheck/tolerance.h): what a correct engine may
  // err by at the worst element; -1 when none was made (a shape mismatch, an integer output).
  double estimatedError = -1;
  bool shapeOnly = false;  // Mismatch: in shape, dtype or presence only
  // Mismatch: each graph output that differs, and how ("max abs error 0.5 at [0, 2] ...").
  std::map<std::string, std::string> differingOutputs{};
  int signal = 0;  // Crash
  // Mismatch or Error against what the property expected: the first diverging node. Quick:
  // the first way of nncheck/localize.h alone (one engine run), to group failures by.
  std::function<std::optional<Divergence>(bool quick)> localize{};
  // The coverage features the engines' isolated runs reached while judging (SanitizerCoverage;
  // RunOutcome::coverage), merged and sorted; empty when no engine is instrumented.
  std::vector<uint32_t> coverage{};
  // The engines' optimizations that changed the model in those runs (RunOutcome::optimizations),
  // merged and sorted; empty when no engine tells.
  std::vector<std::string> optimizations{};
  // The engines runOn ran while judging, by name, sorted, the reference left out: what check()
  // records as the case's backend when its options name none.
  std::vector<std::string> engines{};
};

// What a failing property throws: its verdict, whose outcome is a failure (Mismatch, Crash,
// Hang or Error), with the message as what().
class PropertyFailure : public std::runtime_error {
 public:
  PropertyFailure(Outcome outcome, const std::string& message)
      : std::runtime_error(message), verdict{outcome, message} {}
  Outcome outcome() const { return verdict.outcome; }
  Verdict verdict;
};

// What assertMatchesReference throws for a case whose reference computes NaN or Inf: no test
// (nncheck/tolerance.h), judged NonFinite.
class NonFiniteReference : public Unsupported {
 public:
  explicit NonFiniteReference(const std::string& where)
      : Unsupported("with non-finite reference values",
                    "the reference computes a non-finite value: " + where) {}
};

// Runs the property on the case and turns what it throws into a verdict: PropertyFailure its
// outcome, NonFiniteReference NonFinite, nncheck::Unsupported Unsupported, anything else an
// Error (check() also takes a failed RapidCheck assertion, RC_ASSERT, as a Mismatch).
Verdict judge(const Property& property, const TestCase& tc);

// Whether two verdicts show the same failure, as shrinking must keep it: the same outcome and,
// for mismatches, the same sort (wrong values, or a wrong shape), so that a wrong value does not
// shrink into some other bug that gives a wrong shape on smaller tensors.
bool sameFailure(const Verdict& a, const Verdict& b);

// The isolated engines of a scope: inside one (check() opens one around its whole run), every
// assertion on `engine` uses one persistent worker, made at its first use and kept until the
// scope ends; outside any scope, each call isolates the engine afresh, a process per run.
// Engines are known by address, type and name: each must outlive the scope.
class EngineScope {
 public:
  EngineScope();
  ~EngineScope();
  EngineScope(const EngineScope&) = delete;
  EngineScope& operator=(const EngineScope&) = delete;
  // The engines isolated in this scope so far, in the order first used.
  std::vector<Isolated> isolated() const;

 private:
  friend Isolated isolatedInScope(Backend& engine);
  struct Engines;
  std::unique_ptr<Engines> engines_;
  EngineScope* outer_;
};

// The engine as the innermost scope isolates it (see EngineScope), time limit defaultTimeout().
Isolated isolatedInScope(Backend& engine);

// Runs a test case on the backend in this process, not isolated.
TensorMap runOn(Backend& backend, const TestCase& tc);
// Runs a test case isolated; a crash, hang or error throws PropertyFailure of that kind, a
// model the engine rejects throws nncheck::Unsupported (check() counts it, it is no failure).
TensorMap runOn(const Isolated& engine, const TestCase& tc);

// Throws PropertyFailure(Mismatch) naming each differing output with its worst absolute and
// relative error, the tolerance and the first differing element; missing outputs too. With an
// allowance (roundingAllowance, by output), elements may differ by that much more. `expected`
// names where `want` comes from, for the message ("outputs differ from the reference").
void assertAllClose(const TensorMap& got, const TensorMap& want, const Tolerance& tol = {},
                    const TensorMap* allowance = nullptr,
                    const std::string& expected = "the reference");

// The engine's outputs are allclose to the reference's (toleranceFor(model)). A case whose
// reference computes NaN or Inf anywhere throws NonFiniteReference, one the reference cannot
// compute nncheck::Unsupported: neither is a test.
// A mismatch carries a localizer, which runs the engine again after check() has shrunk the
// case: the engine must outlive the check() call.
void assertMatchesReference(Backend& engine, const TestCase& tc);
void assertMatchesReference(const Isolated& engine, const TestCase& tc);

// Two engines, or two configurations of one (fused and unfused, CPU and OpenCL), agree within
// the tolerance policy. Either one rejecting the model throws nncheck::Unsupported.
void assertAgree(Backend& a, Backend& b, const TestCase& tc);
void assertAgree(const Isolated& a, const Isolated& b, const TestCase& tc);

// The engine agrees with its own baseline configuration (nncheck/oracle.h's baseline oracle)
// as assertAgree judges, the baseline's outputs taken as expected; no reference is needed but
// for the float error estimate. A case the baseline does not run (rejects, crashes, hangs, errs
// on, or computes NaN/Inf for) is no test of the engine. A mismatch or error is localized
// against the baseline's values.
void assertMatchesBaseline(Backend& engine, Backend& baseline, const TestCase& tc);
void assertMatchesBaseline(const Isolated& engine, const Isolated& baseline, const TestCase& tc);

// The engine computes the same on the case's model and on its equivalent variant (the case's
// rewrites applied, nncheck/variants.h), within the tolerance policy (twice the float error a
// correct engine may make, as assertAgree), the model's outputs taken as expected: the
// equivalence oracle (PolyJuice's and MT-DLComp's question), which needs no reference. A case
// without rewrites, or none of whose rewrites applies, is no test. A mismatch is localized to the
// first value of the model the variant computes otherwise.
//   auto g = nncheck::gen::testCase([&] { auto c = cfg; c.rewrites = 6; return c; }());
void assertEquivalentVariantsAgree(Backend& engine, const TestCase& tc);
void assertEquivalentVariantsAgree(const Isolated& engine, const TestCase& tc);

// Two runs of the engine give bit-identical outputs.
void assertDeterministic(Backend& engine, const TestCase& tc);
void assertDeterministic(const Isolated& engine, const TestCase& tc);

}  // namespace nncheck
