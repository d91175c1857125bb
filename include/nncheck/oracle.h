// Oracles: what a campaign, `nncheck reduce` and `nncheck corpus check` judge a case against,
// by name (`--oracle NAME`, listed by `nncheck oracles`). Built in:
//   reference      the engine's outputs allclose to the reference (assertMatchesReference)
//   baseline       each configuration against the engine's own baseline configuration, no
//                  reference: dtypes and ops the reference does not compute can be tested
//   equivalence    the engine on the model against the engine on an equivalent variant of it
//                  (nncheck/variants.h), no reference: a rewrite planted, or a pattern broken
//   deterministic  two runs of the same case give identical bits
// A user's oracle registers from a shared library loaded with --engine-lib:
//
//   NNCHECK_REGISTER_ORACLE(no_negative) {
//     return {.name = "no-negative",
//             .description = "no output element is negative",
//             .check = [](const nncheck::OracleEngines& e, const nncheck::TestCase& tc) {
//               for (auto& [name, t] : nncheck::runOn(e.engine, tc)) ...  // throw
//             }};                                                     // PropertyFailure
//   }
#pragma once

#include <functional>
#include <string>

#include "nncheck/isolation.h"
#include "nncheck/property.h"
#include "nncheck/registry.h"
#include "nncheck/test_case.h"

namespace nncheck {

// The engines an oracle judges a case with, each isolated.
struct OracleEngines {
  const Isolated& engine;              // the configuration under test
  const Isolated* baseline = nullptr;  // the engine's baseline configuration (needsBaseline)
};

struct OracleInfo {
  std::string name{};         // what --oracle takes
  std::string description{};  // one line for `nncheck oracles`
  // The property: returns when the case passes; throws PropertyFailure for a failure and
  // nncheck::Unsupported for a case that is no test (as the assertions of nncheck/property.h).
  std::function<void(const OracleEngines&, const TestCase&)> check{};
  // It compares with the baseline configuration (EngineInfo::baseline), which then runs beside
  // each configuration under test and is no configuration under test itself.
  bool needsBaseline = false;
  // The equivalence rewrites each case needs (GeneratorConfig::rewrites); 0: none.
  int rewrites = 0;
};

class OracleRegistry : public Registry<OracleInfo> {
 public:
  OracleRegistry();
};

// The process's oracles: the built-in ones and those loaded from libraries.
OracleRegistry& oracles();

// Judges the case with the oracle: its verdict (nncheck::judge).
Verdict judgeWith(const OracleInfo& oracle, const OracleEngines& engines, const TestCase& tc);

// The baseline oracle's property: the engine's outputs agree with the baseline's within the
// tolerance policy (assertAgree's), the baseline's taken as expected. A case the baseline does
// not run (rejects, crashes, hangs, errs on) is no test of the engine. A mismatch is localized
// against the baseline's values.
void assertMatchesBaseline(const Isolated& engine, const Isolated& baseline, const TestCase& tc);

namespace detail {
struct OracleRegistration {
  explicit OracleRegistration(OracleInfo (*describe)()) { oracles().addAtStartup(describe); }
};
}  // namespace detail

}  // namespace nncheck

// Registers an oracle at static initialization; the body returns its OracleInfo.
#define NNCHECK_REGISTER_ORACLE(id)                                                    \
  static ::nncheck::OracleInfo nncheck_oracle_info_##id();                             \
  static const ::nncheck::detail::OracleRegistration nncheck_oracle_registration_##id{ \
      &nncheck_oracle_info_##id};                                                      \
  static ::nncheck::OracleInfo nncheck_oracle_info_##id()
