// ORT's rewrite rules (the rules inside Level1_RuleBasedTransformer and
// Level2_RuleBasedTransformer), which its log does not name: the table of them, and which fired,
// told from a model before and after a session that ran the rule-based transformers alone.
//
//   std::vector<std::string> all = ort::rewriteRules(config);           // for optimizations()
//   std::vector<std::string> fired = ort::rulesThatFired(input, optimized, Level::Basic);
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "nncheck/graph.h"
#include "nncheck/ort.h"

namespace nncheck::ort {

// The names of a table's rows (each with a level and a name) at or below the configuration's
// level, less those it disables, sorted and once each: ORT's transformers and its rules alike.
template <class Row, size_t N>
std::vector<std::string> namesAtLevel(const Row (&table)[N], const Config& config) {
  std::vector<std::string> out;
  for (const Row& r : table)
    if (r.level <= config.level &&
        !std::binary_search(config.disabled.begin(), config.disabled.end(), r.name))
      out.push_back(r.name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The rules a configuration's level runs, less those it disables, sorted.
std::vector<std::string> rewriteRules(const Config& config);

// The rules up to `level` that explain how `after` (the model once only the rule-based
// transformers ran) differs from `before`: each rule takes nodes of one op type out, and some
// only next to a node of another type (ConvAddFusion: an Add after a Conv). A node type that
// fewer nodes have afterwards is credited to the rules that remove it and whose neighbour the
// model has, the rules that need a neighbour first (NoopElimination is the Add no Conv
// explains). An inference from the graph, not ORT's own record.
std::vector<std::string> rulesThatFired(const Model& before, const Model& after, Level level);

}  // namespace nncheck::ort
