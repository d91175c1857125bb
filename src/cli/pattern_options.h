// What nncheck gen and nncheck fuzz share to steer generation toward patterns: op weights,
// producer>consumer pair weights and seed patterns.
//
//   PatternOptions p;
//   addPatternOptions(cmd, p);
//   applyPatternOptions(p, cfg);   // throws nncheck::Error naming the option that is wrong
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "nncheck/generator.h"

namespace nncheck::cli {

struct PatternOptions {
  std::string opWeights;    // "Conv=3,Relu=0.5"
  std::string pairWeights;  // "MatMul>Add=10,Conv>BatchNormalization=10"
  std::string seeds;        // a folder of seed patterns
  double seedShare = 0.5;
};

void addPatternOptions(CLI::App* cmd, PatternOptions& o);
void applyPatternOptions(const PatternOptions& o, GeneratorConfig& cfg);

// "a,b,,c" -> {"a", "b", "c"}
std::vector<std::string> splitList(const std::string& s);

}  // namespace nncheck::cli
