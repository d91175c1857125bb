// Seed patterns: a part of one planted first, for the growth around it to feed and consume.
#include <algorithm>

#include "generators/ways_of_growing.h"
#include "nncheck/reference.h"

namespace nncheck::gen {

void plantSeed(Growth& g) {
  const GeneratorConfig& cfg = g.cfg();
  const TestCase& seed = (*cfg.seeds)[g.rng().index(cfg.seeds->size())];
  const size_t n = seed.model.graph.nodes.size();
  const size_t room = static_cast<size_t>(std::max(1, cfg.nodes - 1));
  const size_t length = n <= room ? n : std::max<size_t>(1, room / 2);
  const size_t start = g.rng().index(n - length + 1);
  std::vector<size_t> keep;
  for (size_t i = start; i < start + length; ++i) keep.push_back(i);
  g.adopt(seed, keep, runReferenceAllValues(seed.model, seed.inputs));
}

}  // namespace nncheck::gen
