// What a model holds of what generation aims at: constant subexpressions and the prior's blocks.
#include <set>

#include "generators/blocks.h"
#include "nncheck/generator.h"

namespace nncheck {

AimedPatterns aimedPatternsIn(const Model& model) {
  AimedPatterns out;
  const Graph& g = model.graph;
  std::set<std::string> constant;  // initializers and what nodes compute from them alone
  for (const Initializer& w : g.initializers) constant.insert(w.name);
  for (const Node& n : g.nodes) {  // in topological order, as every model's nodes are
    bool fromConstants = !n.inputs.empty();
    for (const std::string& in : n.inputs)
      fromConstants = fromConstants && (in.empty() || constant.count(in));
    if (!fromConstants) continue;
    ++out.constantNodes;
    constant.insert(n.outputs.begin(), n.outputs.end());
  }
  for (const gen::Block& b : gen::blockPrior())
    if (gen::containsBlock(g, b)) out.blocks.push_back(b.name);
  return out;
}

std::vector<std::string> blockNames() {
  std::vector<std::string> out;
  for (const gen::Block& b : gen::blockPrior()) out.push_back(b.name);
  return out;
}

}  // namespace nncheck
