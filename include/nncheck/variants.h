// Equivalent variants of a model: semantics-preserving rewrites from one table, each applied
// only where nncheck's own rules show its precondition holds, each computing exactly what the
// model computes (value-exact) or within the float error a correct engine may make (the
// rounding allowance of nncheck/tolerance.h). The equivalence oracle runs an engine on a model
// and on its variant and compares; a rewrite also plants the shapes optimizers match
// (transpose pairs, reshape chains, x*1, MatMul+Add, Conv+BatchNormalization) without knowing
// the optimizer.
//
//   tc.rewrites = nncheck::drawRewrites(tc.model, /*seed=*/7, /*count=*/2);
//   nncheck::Model variant = nncheck::applyRewrites(tc.model, tc.rewrites);
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nncheck/test_case.h"

namespace nncheck {

struct RewriteRule {
  std::string name;         // what Rewrite::rule holds: "transpose-pair"
  std::string description;  // what it does, and why the result is the same
  bool exact = true;        // value-exact; else within the rounding allowance
};

// The table, in a fixed order.
const std::vector<RewriteRule>& rewriteRules();

// What a variant may hold, so that an engine takes it as it takes the model: the ops the rules
// add (allowed, empty: any; denied) and the dtypes of the values they add (empty: any; int64
// shape operands aside). The generator passes its GeneratorConfig's.
struct VariantLimits {
  std::vector<std::string> ops{};
  std::vector<std::string> denyOps{};
  std::vector<DType> dtypes{};
};

// Up to `count` rewrites at distinct values of the model within the limits, drawn from the seed
// alone (the same model and seed give the same rewrites); each applies in turn and the variant of
// them all is a valid model (nncheck::checkValid). Fewer when fewer apply.
std::vector<Rewrite> drawRewrites(const Model& model, uint64_t seed, int count,
                                  const VariantLimits& limits = {});

// The variant: each rewrite applied in order where it still applies (its value is there, its
// precondition holds); `applied`, when given, receives those that were. Throws nncheck::Error
// for a rule the table does not have.
Model applyRewrites(const Model& model, const std::vector<Rewrite>& rewrites,
                    std::vector<Rewrite>* applied = nullptr);

// Counts a case in `casesByRule` once for each rule among its rewrites.
void countRewriteRules(const std::vector<Rewrite>& rewrites,
                       std::map<std::string, int64_t>& casesByRule);

// What a run's variants applied, for its statistics (cases by rule): "equivalence rewrites
// applied (cases): transpose-pair 12, mul-one 9; never applied: softmax-decomposed".
std::string describeRewriteCounts(const std::map<std::string, int64_t>& casesByRule);

// "transpose-pair at v3 (form 1), gemm at v7": for messages.
std::string describeRewrites(const std::vector<Rewrite>& rewrites);

}  // namespace nncheck
