// The culprit optimizations of a finding: the smallest set of an engine's optional
// optimizations that a failure needs, every other one switched off, found by delta debugging
// (Zeller's ddmin over the names, as DuoReduce and LLVM's opt-bisect narrow passes), and the
// workaround a user deploying the model needs: the configuration with those switched off.
//
//   // fails(disabled): does the case still fail with these optimizations switched off?
//   std::optional<nncheck::Culprit> c = nncheck::findCulprit(engine.optimizations(), fails);
//   if (c) std::cout << nncheck::describeCulprit(*c);  // "fails with only A and B enabled; ..."
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nncheck/corpus.h"

namespace nncheck {

// Searches the optimizations (names an engine switches off one by one) for the set a failure
// needs. `fails(disabled)` runs the case with the named optimizations switched off and says
// whether it fails the same way. nullopt when the failure needs none of them: it still fails
// with every one switched off (the engine's kernels, or optimizations it cannot switch off), or
// does not fail with all of them on. Deterministic: the names are searched in sorted order.
// `tryFirst` holds sets found for other failures (a campaign's earlier culprits): one that this
// failure needs too, and is 1-minimal for it, is taken after |set| + 3 runs instead of a search.
// `searchBeyond` false: none of those, no search either (what telling a known bug apart needs).
std::optional<Culprit> findCulprit(
    std::vector<std::string> optimizations,
    const std::function<bool(const std::vector<std::string>&)>& fails,
    const std::vector<std::vector<std::string>>& tryFirst = {}, bool searchBeyond = true);

// "fails with only MatMulAddFusion enabled; passes with it disabled" (or "...; still fails with
// them disabled: another set of optimizations fails it too").
std::string describeCulprit(const Culprit& c);

}  // namespace nncheck
