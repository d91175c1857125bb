#include "nncheck/property.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>
#include <typeinfo>
#include <utility>

#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "nncheck/tolerance.h"
#include "nncheck/variants.h"

namespace nncheck {

namespace {
thread_local EngineScope* innermostScope = nullptr;
// Where the isolated runs of the judge() running on this thread put their coverage and the
// optimizations that fired.
struct Reached {
  std::vector<uint32_t> coverage;
  std::vector<std::string> optimizations;
  std::vector<std::string> engines;
};
thread_local Reached* judgedReach = nullptr;

template <class T>
void sortedOnce(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}
}  // namespace

// An engine made and destroyed per case lands at one address again and again: its type and
// name keep a worker of one engine from serving another.
struct EngineScope::Engines {
  std::map<std::tuple<const Backend*, std::string, std::string>, Isolated> isolated;
  std::vector<Isolated> inOrder;
};

EngineScope::EngineScope() : engines_(std::make_unique<Engines>()), outer_(innermostScope) {
  innermostScope = this;
}

EngineScope::~EngineScope() { innermostScope = outer_; }

Isolated isolatedInScope(Backend& engine) {
  if (!innermostScope) return isolated(engine, defaultTimeout(), Isolation::ForkPerRun);
  auto& engines = innermostScope->engines_->isolated;
  const auto key = std::make_tuple(&engine, std::string(typeid(engine).name()), engine.name());
  auto it = engines.find(key);
  if (it == engines.end()) {
    it = engines.emplace(key, isolated(engine, defaultTimeout(), Isolation::Persistent)).first;
    innermostScope->engines_->inOrder.push_back(it->second);
  }
  return it->second;
}

std::vector<Isolated> EngineScope::isolated() const { return engines_->inOrder; }

namespace {

// A localizer asked again (the failure's key takes the quick way, the known bugs' check and the
// record the full one) runs the engine no more: each way's answer is kept, and the full way
// starts from what the quick one found, which is its own first way.
std::function<std::optional<Divergence>(bool)> remembered(
    std::function<std::optional<Divergence>(bool)> localize) {
  struct Answers {
    std::optional<std::optional<Divergence>> quick, full;
  };
  auto answers = std::make_shared<Answers>();
  return [localize = std::move(localize), answers](bool quick) {
    std::optional<std::optional<Divergence>>& answer = quick ? answers->quick : answers->full;
    if (!answer)
      answer = !quick && answers->quick && *answers->quick ? *answers->quick : localize(quick);
    return *answer;
  };
}

}  // namespace

Verdict judge(const Property& property, const TestCase& tc) {
  Verdict v;
  Reached reached;
  Reached* outer = std::exchange(judgedReach, &reached);
  struct Restore {
    Reached*& slot;
    Reached* outer;
    ~Restore() { slot = outer; }
  } restore{judgedReach, outer};
  try {
    property(tc);
  } catch (const PropertyFailure& f) {
    v = f.verdict;
    if (v.localize) v.localize = remembered(std::move(v.localize));
  } catch (const NonFiniteReference& u) {
    v = {Outcome::NonFinite, u.what(), u.category()};
  } catch (const Unsupported& u) {
    v = {Outcome::Unsupported, u.what(), u.category()};
  } catch (const std::exception& e) {
    v = {Outcome::Error, std::string("the property threw: ") + e.what(), ""};
  }
  sortedOnce(reached.coverage);
  sortedOnce(reached.optimizations);
  sortedOnce(reached.engines);
  v.coverage = std::move(reached.coverage);
  v.optimizations = std::move(reached.optimizations);
  v.engines = std::move(reached.engines);
  if (outer) {
    outer->coverage.insert(outer->coverage.end(), v.coverage.begin(), v.coverage.end());
    outer->optimizations.insert(outer->optimizations.end(), v.optimizations.begin(),
                                v.optimizations.end());
    outer->engines.insert(outer->engines.end(), v.engines.begin(), v.engines.end());
  }
  return v;
}

bool sameFailure(const Verdict& a, const Verdict& b) {
  return isFailure(a.outcome) && a.outcome == b.outcome &&
         (a.outcome != Outcome::Mismatch || a.shapeOnly == b.shapeOnly);
}

namespace {
void recordEngine(const std::string& name) {
  if (judgedReach && name != reference().name()) judgedReach->engines.push_back(name);
}
}  // namespace

TensorMap runOn(Backend& backend, const TestCase& tc) {
  recordEngine(backend.name());
  return backend.run(tc.model, tc.inputs);
}

TensorMap runOn(const Isolated& engine, const TestCase& tc) {
  recordEngine(engine.engineName());
  RunOutcome r = engine.run(tc.model, tc.inputs);
  if (judgedReach) {
    judgedReach->coverage.insert(judgedReach->coverage.end(), r.coverage.begin(), r.coverage.end());
    judgedReach->optimizations.insert(judgedReach->optimizations.end(), r.optimizations.begin(),
                                      r.optimizations.end());
  }
  const std::string who = engine.engineName();
  switch (r.kind) {
    case Outcome::Pass:
      return std::move(r.outputs);
    case Outcome::Unsupported:
      throw Unsupported("rejected by the engine",
                        who + " does not support the model: " + r.message);
    case Outcome::Crash: {
      PropertyFailure f(Outcome::Crash, who + " crashed: " + r.message);
      f.verdict.signal = r.signal;
      throw f;
    }
    case Outcome::Hang:
      throw PropertyFailure(Outcome::Hang, who + " hung: " + r.message);
    default:
      throw PropertyFailure(Outcome::Error, who + " failed: " + r.message);
  }
}

void assertAllClose(const TensorMap& got, const TensorMap& want, const Tolerance& tol,
                    const TensorMap* allowance, const std::string& expected) {
  std::ostringstream os;
  os.precision(6);
  double maxAbs = 0, maxRel = 0, estimate = allowance ? 0 : -1;
  bool ok = true, valuesDiffer = false;
  std::map<std::string, std::string> differing;
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      ok = false;
      differing[name] = "missing from the engine's outputs";
      os << "  output '" << name << "': " << differing[name] << "\n";
      continue;
    }
    const Tensor* allowed = nullptr;
    if (auto a = allowance ? allowance->find(name) : TensorMap::const_iterator();
        allowance && a != allowance->end())
      allowed = &a->second;
    Comparison c = compareTensors(it->second, w, tol, allowed);
    if (!c.ok && !c.layoutDiffers && c.maxAbsError >= maxAbs && allowance)
      estimate = c.allowanceAtWorst;
    maxAbs = std::max(maxAbs, c.maxAbsError);
    maxRel = std::max(maxRel, c.maxRelError);
    if (!c.ok) {
      ok = false;
      valuesDiffer |= !c.layoutDiffers;
      differing[name] = c.message;
      os << "  output '" << name << "': " << c.message << "\n";
    }
  }
  if (ok) return;
  std::ostringstream head;
  head.precision(6);
  if (valuesDiffer) {
    head << "outputs differ from " << expected << " (worst abs error " << maxAbs
         << ", worst rel error " << maxRel << "; tolerance rtol=" << tol.rtol
         << " atol=" << tol.atol;
    if (estimate >= 0)
      head << "; a correct engine's float error there is estimated at " << estimate << " at most";
    head << ")\n";
  } else  // no value was compared: figures of 0 would read as a pass
    head << "outputs differ from " << expected
         << " in shape, dtype or presence (no values compared)\n";
  PropertyFailure f(Outcome::Mismatch, head.str() + os.str());
  f.verdict.shapeOnly = !valuesDiffer;
  f.verdict.maxAbsError = maxAbs;
  f.verdict.maxRelError = maxRel;
  f.verdict.tolerance = tol;
  f.verdict.estimatedError = valuesDiffer ? estimate : -1;
  f.verdict.differingOutputs = std::move(differing);
  throw f;
}

namespace {

// assertAllClose, and when values differ beyond the tolerance, again allowing `scale` times the
// float error a correct engine may make (roundingAllowance over the reference's outputs, which
// `reference` computes only then). Without the reference, the first failure stands.
void assertCloseAllowingFloatError(const TensorMap& got, const TensorMap& want,
                                   const Tolerance& tol, const TestCase& tc, double scale,
                                   const std::function<TensorMap()>& reference,
                                   const std::string& expected = "the reference") {
  try {
    assertAllClose(got, want, tol, nullptr, expected);
  } catch (const PropertyFailure& f) {
    if (f.outcome() != Outcome::Mismatch || f.verdict.shapeOnly) throw;
    TensorMap allowance;
    try {
      allowance = roundingAllowance(tc.model, tc.inputs, reference());
    } catch (const Error&) {
      throw f;
    }
    for (auto& [name, t] : allowance)
      for (double& x : t.span<double>()) x *= scale;
    assertAllClose(got, want, tol, &allowance, expected);
  }
}

}  // namespace

void assertMatchesReference(Backend& engine, const TestCase& tc) {
  assertMatchesReference(isolatedInScope(engine), tc);
}

void assertAgree(Backend& a, Backend& b, const TestCase& tc) {
  assertAgree(isolatedInScope(a), isolatedInScope(b), tc);
}

void assertMatchesBaseline(Backend& engine, Backend& baseline, const TestCase& tc) {
  assertMatchesBaseline(isolatedInScope(engine), isolatedInScope(baseline), tc);
}

void assertEquivalentVariantsAgree(Backend& engine, const TestCase& tc) {
  assertEquivalentVariantsAgree(isolatedInScope(engine), tc);
}

void assertDeterministic(Backend& engine, const TestCase& tc) {
  assertDeterministic(isolatedInScope(engine), tc);
}

void assertMatchesReference(const Isolated& engine, const TestCase& tc) {
  TensorMap values;
  try {
    values = runReferenceAllValues(tc.model, tc.inputs);
  } catch (const Unsupported&) {
    throw;
  } catch (const Error& e) {  // the case is outside what the reference computes: no test
    throw Unsupported("reference", std::string("reference: ") + e.what());
  }
  if (auto where = firstNonFinite(tc.model, values)) throw NonFiniteReference(*where);
  TensorMap want;
  for (const ValueInfo& o : tc.model.graph.outputs) {
    auto it = values.find(o.name);
    if (it == values.end())
      throw Unsupported("reference", "reference: graph output '" + o.name + "' is never computed");
    want[o.name] = it->second;
  }
  const Tolerance tol = toleranceFor(tc.model);
  try {
    assertCloseAllowingFloatError(runOn(engine, tc), want, tol, tc, 1, [&] { return want; });
  } catch (PropertyFailure& f) {
    // An error may follow a wrong shape computed upstream: localized too.
    if (f.outcome() == Outcome::Mismatch || f.outcome() == Outcome::Error)
      f.verdict.localize = [engine, tc, tol](bool quick) {
        return quick ? localizeExposed(engine, tc, tol) : localizeDivergence(engine, tc, tol);
      };
    throw;
  }
}

void assertAgree(const Isolated& a, const Isolated& b, const TestCase& tc) {
  TensorMap fromA = runOn(a, tc);
  TensorMap fromB = runOn(b, tc);
  try {
    // Both may make the float error of a correct engine: twice the estimate apart.
    assertCloseAllowingFloatError(
        fromA, fromB, toleranceFor(tc.model), tc, 2,
        [&] { return runReference(tc.model, tc.inputs); }, b.engineName());
  } catch (const PropertyFailure& f) {
    PropertyFailure g(Outcome::Mismatch,
                      a.engineName() + " and " + b.engineName() +
                          " disagree (the second taken as expected): " + f.what());
    const std::string message = g.verdict.message;
    g.verdict = f.verdict;
    g.verdict.message = message;
    throw g;
  }
}

void assertMatchesBaseline(const Isolated& engine, const Isolated& baseline, const TestCase& tc) {
  const std::string base = baseline.engineName();
  TensorMap want;
  try {
    want = runOn(baseline, tc);
  } catch (const PropertyFailure& f) {
    throw Unsupported("baseline", "the baseline " + base + " does not run the case: " + f.what());
  }
  if (auto where = firstNonFinite(tc.model, want))
    throw Unsupported("baseline",
                      "the baseline " + base + " computes a non-finite value: " + *where);
  const Tolerance tol = toleranceFor(tc.model);
  try {
    // Both may make the float error of a correct engine: twice the estimate apart.
    assertCloseAllowingFloatError(
        runOn(engine, tc), want, tol, tc, 2, [&] { return runReference(tc.model, tc.inputs); },
        "the baseline " + base);
  } catch (PropertyFailure& f) {
    if (f.outcome() == Outcome::Mismatch || f.outcome() == Outcome::Error)
      f.verdict.localize = [engine, baseline, tc, tol](bool quick) {
        return quick ? localizeExposed(engine, tc, tol, &baseline)
                     : localizeDivergence(engine, tc, tol, &baseline);
      };
    throw;
  }
}

namespace {

// The first node of the model whose value the engine computes otherwise in the variant, every
// value of both exposed (the values a rewrite keeps have their names in both).
std::optional<Divergence> variantDivergence(const Isolated& engine, const TestCase& tc,
                                            const TestCase& variant, const Tolerance& tol) {
  TensorMap values, variantValues;
  try {
    values = runReferenceAllValues(tc.model, tc.inputs);
    variantValues = runReferenceAllValues(variant.model, variant.inputs);
  } catch (const Error&) {
    return std::nullopt;  // not typed: not localized here
  }
  RunOutcome original = engine.run(exposeAllValues(tc.model, values), tc.inputs);
  RunOutcome rewritten = engine.run(exposeAllValues(variant.model, variantValues), tc.inputs);
  if (original.kind != Outcome::Pass || rewritten.kind != Outcome::Pass) return std::nullopt;
  std::erase_if(original.outputs, [&](const auto& kv) { return !variantValues.count(kv.first); });
  return firstDivergence(tc.model.graph, rewritten.outputs, original.outputs, tol);
}

}  // namespace

void assertEquivalentVariantsAgree(const Isolated& engine, const TestCase& tc) {
  if (tc.rewrites.empty())
    throw Unsupported(
        "no rewrite",
        "the case has no equivalence rewrites (GeneratorConfig::rewrites draws them)");
  std::vector<Rewrite> applied;
  TestCase variant = tc;
  variant.model = applyRewrites(tc.model, tc.rewrites, &applied);
  variant.rewrites.clear();
  if (applied.empty())
    throw Unsupported("no rewrite", "none of the case's rewrites applies to its model");
  const TensorMap want = runOn(engine, tc);
  const TensorMap got = runOn(engine, variant);
  // The variant may add ops that accumulate (a Softmax spelled out): the wider tolerance.
  Tolerance tol = toleranceFor(tc.model);
  const Tolerance other = toleranceFor(variant.model);
  tol.rtol = std::max(tol.rtol, other.rtol);
  tol.atol = std::max(tol.atol, other.atol);
  try {
    // Either run may make the float error of a correct engine: twice the estimate apart.
    assertCloseAllowingFloatError(
        got, want, tol, tc, 2, [&] { return runReference(tc.model, tc.inputs); },
        engine.engineName() + " on the model itself (the variant: " + describeRewrites(applied) +
            ")");
  } catch (PropertyFailure& f) {
    f.verdict.localize = [engine, tc, variant, tol](bool) {
      return variantDivergence(engine, tc, variant, tol);
    };
    throw;
  }
}

void assertDeterministic(const Isolated& engine, const TestCase& tc) {
  TensorMap first = runOn(engine, tc);
  TensorMap second = runOn(engine, tc);
  for (const auto& [name, t] : first) {
    auto it = second.find(name);
    if (it == second.end() || !(it->second == t))
      throw PropertyFailure(Outcome::Mismatch,
                            engine.engineName() + ": two runs of the same case differ in output '" +
                                name + "' (first run " + tensorToString(t) + ", second " +
                                (it == second.end() ? "missing" : tensorToString(it->second)) +
                                ")");
  }
}

}  // namespace nncheck
