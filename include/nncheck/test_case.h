// A test case: a model and the values of its graph inputs, plus the seed that made it.
//
//   nncheck::TestCase tc = nncheck::makeTestCase(cfg, /*seed=*/7);
//   std::cout << nncheck::modelToText(tc.model);
#pragma once

#include <cstdint>
#include <string>

#include "nncheck/generator.h"
#include "nncheck/reference.h"

namespace nncheck {

struct TestCase {
  Model model;
  TensorMap inputs;  // one per graph input that is not an initializer
  uint64_t seed = 0;
};

// A generated model and its input values. With cfg.finiteValues (the default) every value of
// the model is finite and within 1e6 on these inputs and weights (value search ran as the model
// grew); without, the inputs are randomInputs(model, seed). Deterministic like generateModel,
// whose model it is.
TestCase makeTestCase(const GeneratorConfig& cfg, uint64_t seed,
                      GenerationStats* stats = nullptr);

// The model as readable text, one line per value and node:
//   input  x0: float32[2, 3]
//   v2 = MatMul(x0, w1)          # float32[2, 4]
//   output v3: float32[2, 4]
std::string modelToText(const Model& model);

}  // namespace nncheck
