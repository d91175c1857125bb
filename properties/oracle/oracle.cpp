// The oracle registry and the built-in oracles.
#include "nncheck/oracle.h"

namespace nncheck {
namespace {

void requireCheck(const OracleInfo& info) {
  if (!info.check) throw Error("oracle '" + info.name + "': no property (OracleInfo::check)");
}

}  // namespace

OracleRegistry::OracleRegistry()
    : Registry("oracle",
               "a shared library of oracles loads with --engine-lib or NNCHECK_ENGINE_LIBS",
               &requireCheck) {}

OracleRegistry& oracles() {
  static OracleRegistry* registry = [] {
    auto* r = new OracleRegistry;  // never destroyed: oracles may register from other statics
    r->add({.name = "reference",
            .description = "the engine's outputs allclose to the reference interpreter's (the "
                           "ONNX spec), localized to the first diverging node",
            .check = [](const OracleEngines& e, const TestCase& tc) {
              assertMatchesReference(e.engine, tc);
            }});
    r->add({.name = "baseline",
            .description = "each configuration against the engine's own baseline "
                           "configuration, without the reference: for dtypes and ops the "
                           "reference does not compute",
            .check =
                [](const OracleEngines& e, const TestCase& tc) {
                  if (!e.baseline) throw Error("oracle 'baseline': no baseline engine given");
                  assertMatchesBaseline(e.engine, *e.baseline, tc);
                },
            .needsBaseline = true});
    r->add({.name = "equivalence",
            .description = "the engine on each case's model against the engine on an "
                           "equivalent variant of it (rewrites of nncheck's table), at the same "
                           "configuration, without the reference",
            .check = [](const OracleEngines& e,
                        const TestCase& tc) { assertEquivalentVariantsAgree(e.engine, tc); },
            .rewrites = 6});
    r->add({.name = "deterministic",
            .description = "two runs of the same case give bit-identical outputs",
            .check = [](const OracleEngines& e, const TestCase& tc) {
              assertDeterministic(e.engine, tc);
            }});
    return r;
  }();
  return *registry;
}

Verdict judgeWith(const OracleInfo& oracle, const OracleEngines& engines, const TestCase& tc) {
  return judge([&](const TestCase& c) { oracle.check(engines, c); }, tc);
}

}  // namespace nncheck
