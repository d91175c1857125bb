// What nncheck gen and nncheck fuzz share to steer generation: the dtypes of graph values, op
// weights, producer>consumer pair weights, seed patterns and control flow.
//
//   GenerationOptions p;
//   addGenerationOptions(cmd, p);
//   applyGenerationOptions(p, cfg);   // throws nncheck::Error naming the option that is wrong
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "nncheck/generator.h"

namespace nncheck::cli {

struct GenerationOptions {
  std::string dtypes;       // "float32,float64"; empty: the generator's default
  std::string opWeights;    // "Conv=3,Relu=0.5"
  std::string pairWeights;  // "MatMul>Add=10,Conv>BatchNormalization=10"
  std::string seeds;        // a folder of seed patterns
  double seedShare = GeneratorConfig{}.seedShare;
  double constantShare = GeneratorConfig{}.constantShare;
  double blockShare = GeneratorConfig{}.blockShare;
  bool controlFlow = false;  // grow If, Loop and Scan with their bodies
};

void addGenerationOptions(CLI::App* cmd, GenerationOptions& o);
void applyGenerationOptions(const GenerationOptions& o, GeneratorConfig& cfg);

// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> splitList(const std::string& s);

}  // namespace nncheck::cli
