// Blocks: a block of the prior (generators/blocks.h) grown as a run of aimed insertions, each
// node reading what the block says (the previous node's output, the block's input, a constant)
// and drawn and judged by its op's rule like any other. A node that does not fit ends the block
// there: a part of a block is still the pattern of its first rewrites.
#include <algorithm>

#include "generators/blocks.h"
#include "generators/ways_of_growing.h"

namespace nncheck::gen {
namespace {

// A value for a block's first node to read first when it must keep its shape (a residual's
// Conv): a recent computed value is likelier, as in a plain draw.
int pickBlockInput(Growth& g, const std::string& op) {
  const auto& allowed = g.entry(op)->dtypesOfInput(0);
  std::vector<int> ok;
  std::vector<double> w;
  for (size_t v = 0; v < g.values().size(); ++v) {
    const Value& val = g.values()[v];
    if (val.kind == Value::Kind::Initializer ||
        std::find(allowed.begin(), allowed.end(), val.dtype) == allowed.end())
      continue;
    ok.push_back(static_cast<int>(v));
    w.push_back(val.kind == Value::Kind::Computed ? 1.0 + static_cast<double>(v) : 1.0);
  }
  return ok.empty() ? -1 : ok[g.rng().weighted(w)];
}

// The weight of op `op` in the config's table; 0 when it is not there.
double weightOf(const Growth& g, const std::string& op) {
  const OpEntry* e = g.entry(op);
  return e ? e->weight : 0;
}

}  // namespace

bool growBlock(Growth& g, size_t room) {
  // A block is as likely as the least likely of the ops it grows before one is missing (the
  // config's op weights: what an engine mostly rejects stays rare in blocks too).
  std::vector<const Block*> usable;
  std::vector<double> weights;
  for (const Block& b : blockPrior()) {
    double w = std::min(weightOf(g, b.steps[0].op), weightOf(g, b.steps[1].op));
    for (size_t s = 2; s < b.steps.size() && weightOf(g, b.steps[s].op) > 0; ++s)
      w = std::min(w, weightOf(g, b.steps[s].op));
    if (w <= 0) continue;
    usable.push_back(&b);
    weights.push_back(w);
  }
  if (usable.empty() || room < 2) return false;
  const Block& b = *usable[g.rng().weighted(weights)];
  std::vector<std::vector<std::string>> outs, ins;  // per node placed: its outputs and inputs
  auto resolve = [&](const BlockRef& r) {
    const auto& names = r.kind == BlockRef::Kind::Output ? outs : ins;
    const size_t step = r.kind == BlockRef::Kind::BlockInput ? 0 : r.step;
    const size_t k = r.kind == BlockRef::Kind::BlockInput ? 0 : r.index;
    if (step >= names.size() || k >= names[step].size() || names[step][k].empty()) return -1;
    return g.indexNamed(names[step][k]);
  };
  for (size_t s = 0; s < b.steps.size() && s < room; ++s) {
    const BlockStep& step = b.steps[s];
    if (weightOf(g, step.op) <= 0) break;
    Aim aim{.op = step.op, .attributes = step.attributes};
    for (const auto& [i, c] : step.constants) aim.constants[i] = c;
    if (s > 0) aim.reads[0] = resolve(BlockRef::output(s - 1));
    bool wired = true;
    for (const auto& [i, ref] : step.reads) {
      const int v = resolve(ref);
      if (v >= 0)
        aim.reads[i] = v;
      else
        wired = wired && i != 0;  // an input the earlier node left out (a zero point): drawn
    }
    if (!wired || (s > 0 && aim.reads[0] < 0)) break;
    const size_t valueCount = g.values().size();
    if (step.keepsInputShape) {
      const int x = s == 0 ? pickBlockInput(g, step.op) : resolve(BlockRef::input());
      if (x < 0) break;
      const Value& in = g.values()[static_cast<size_t>(x)];
      g.values().push_back({g.fresh("v"), in.dtype, in.shape, Value::Kind::Input, {}});
      aim.reads[0] = x;
      aim.placeholder = static_cast<int>(valueCount);
      aim.at = g.nodes().size();
    }
    if (!g.insert(aim)) {
      if (aim.placeholder >= 0) g.values().resize(valueCount);  // the placeholder, unread
      break;
    }
    outs.push_back(g.nodes().back().outputs);
    ins.push_back(g.nodes().back().inputs);
  }
  return !outs.empty();
}

}  // namespace nncheck::gen
