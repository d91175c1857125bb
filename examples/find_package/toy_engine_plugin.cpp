// The toy engine as a plug-in of the nncheck command line, with a property of its own:
//   nncheck fuzz --engine-lib ./libtoy_engine.so --backend toy --config O2
//   nncheck fuzz --engine-lib ./libtoy_engine.so --backend toy --config O2 --oracle toy-as-o0
#include <nncheck/engine.h>
#include <nncheck/oracle.h>
#include <nncheck/tolerance.h>

#include <memory>

#include "toy_engine.h"

NNCHECK_REGISTER_ENGINE(toy) {
  return {.name = "toy",
          .description = "the toy optimizing engine of examples/find_package: O0, O1, O2",
          .make = [](const std::string& level) -> std::unique_ptr<nncheck::Backend> {
            return std::make_unique<toy::Engine>(level.empty() ? "O0" : level);
          },
          .configurations =
              [] {
                return std::vector<std::string>{"O0", "O1", "O2"};
              }};
}

// The team's own property: every level computes what O0 computes (run here, in the engine's
// process), with no reference in the comparison.
NNCHECK_REGISTER_ORACLE(toy_as_o0) {
  return {.name = "toy-as-o0",
          .description = "the toy engine's outputs as its O0 level computes them",
          .check = [](const nncheck::OracleEngines& e, const nncheck::TestCase& tc) {
            toy::Engine o0("O0");
            nncheck::assertAllClose(nncheck::runOn(e.engine, tc), nncheck::runOn(o0, tc),
                                    nncheck::toleranceFor(tc.model));
          }};
}
