// Mutations that keep a case's nodes and wiring and change its numbers or attributes, for
// mutateTestCase (the generator's other mutations add, remove and regrow nodes):
// - resolveNumbers: every dim, shape-operand content and symbolic attribute re-solved by z3 over
//   all the nodes' rules at once (solver::GraphEncoding), aimed at one change: two dims of a
//   value made equal (a square MatMul), entries of a shape operand set to 0 (Reshape's "copy
//   this dim", Pad's "no padding here"), or one number moved;
// - redrawAttribute: one attribute of one node drawn again, or dropped to its default.
// Each returns nullopt when its change is impossible, leaves the config's limits, or (with
// cfg.finiteValues) no values keep the mutant finite; a mutant passes every node's rule.
//
//   Rng rng(seed);
//   if (auto m = gen::resolveNumbers(cfg, parent, rng)) tc = *m;
#pragma once

#include <optional>
#include <vector>

#include "core/rng.h"
#include "generators/op_table.h"
#include "nncheck/test_case.h"

namespace nncheck::gen {

std::optional<TestCase> resolveNumbers(const GeneratorConfig& cfg, const TestCase& parent,
                                       Rng& rng);
std::optional<TestCase> redrawAttribute(const GeneratorConfig& cfg,
                                        const std::vector<OpEntry>& table, const TestCase& parent,
                                        Rng& rng);

}  // namespace nncheck::gen
