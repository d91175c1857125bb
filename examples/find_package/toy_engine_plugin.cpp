// The toy engine as a plug-in of the nncheck command line:
//   nncheck fuzz --engine-lib ./libtoy_engine.so --backend toy --config O2
#include <nncheck/engine.h>

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
