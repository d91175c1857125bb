// The generator's public entry points (nncheck/generator.h): a model grown from nothing, or a
// mutant of a kept one. The growing itself is in generators/growth.h (the core) and the
// generators/grow_*.cpp files (the ways of growing).
#include "core/rng.h"
#include "generators/op_table.h"
#include "generators/values.h"
#include "generators/ways_of_growing.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/variants.h"
#include "ops/rule.h"

namespace nncheck {

using ops::ValueDomain;

GeneratorConfig configFor(const Capabilities& caps, int nodes) {
  GeneratorConfig cfg;
  cfg.nodes = nodes;
  cfg.ops = caps.ops;
  if (!caps.dtypes.empty()) cfg.dtypes = caps.dtypes;
  cfg.opset = caps.opset;
  // An engine that takes weights from anywhere gets them from anywhere, sometimes computed.
  cfg.weightsAsInitializers = caps.weightsMustBeInitializers;
  cfg.shapeOperandsAsInitializers = caps.shapeOperandsMustBeInitializers;
  cfg.opWeights = caps.opWeights;
  return cfg;
}

void validateConfig(const GeneratorConfig& cfg) {
  if (cfg.rewrites < 0 || cfg.rewrites > 64)
    throw Error("generator: rewrites = " + std::to_string(cfg.rewrites) + ": expected 0 to 64");
  gen::buildOpTable(cfg);
}

std::vector<std::string> usableOps(const GeneratorConfig& cfg) {
  std::vector<std::string> out;
  for (const auto& e : gen::buildOpTable(cfg)) out.push_back(e.spec->type);
  return out;
}

namespace {
// A case's variants hold what its model may: the config's ops and dtypes.
VariantLimits variantLimits(const GeneratorConfig& cfg) {
  return {cfg.ops, cfg.denyOps, cfg.dtypes};
}
}  // namespace

TestCase makeTestCase(const GeneratorConfig& cfg, uint64_t seed, GenerationStats* stats) {
  const ops::DefinedOnly definedOnly;
  GenerationStats local;
  const auto table = gen::buildOpTable(cfg);
  gen::Growth g(cfg, table, seed, stats ? *stats : local);
  g.growControlFlow = gen::growControlFlow;
  if (cfg.seeds && !cfg.seeds->empty() && g.rng().chance(cfg.seedShare)) gen::plantSeed(g);
  TestCase tc = gen::growTo(g, static_cast<size_t>(cfg.nodes));
  if (!cfg.finiteValues) tc.inputs = randomInputs(tc.model, seed);
  tc.rewrites = drawRewrites(tc.model, seed, cfg.rewrites, variantLimits(cfg));
  return tc;
}

TestCase mutateTestCase(const GeneratorConfig& cfg, const TestCase& parent, uint64_t seed,
                        GenerationStats* stats) {
  const ops::DefinedOnly definedOnly;
  GenerationStats local;
  const auto table = gen::buildOpTable(cfg);
  gen::Growth g(cfg, table, seed, stats ? *stats : local);
  g.growControlFlow = gen::growControlFlow;
  TestCase tc = gen::mutate(g, parent);
  tc.seed = seed;
  if (!cfg.finiteValues) tc.inputs = randomInputs(tc.model, seed);
  tc.rewrites = drawRewrites(tc.model, seed, cfg.rewrites, variantLimits(cfg));
  return tc;
}

Model generateModel(const GeneratorConfig& cfg, uint64_t seed, GenerationStats* stats) {
  return makeTestCase(cfg, seed, stats).model;
}

TensorMap randomInputs(const Model& model, uint64_t seed) {
  TensorMap out;
  Rng rng(seed ^ 0x5eed5eed5eed5eedull);
  for (const ValueInfo* in : model.graph.feedInputs()) {
    auto shape = in->shape();
    if (!shape) throw Error("randomInputs: input '" + in->name + "' has no fully known shape");
    out[in->name] = randomTensor(rng, in->dtype, *shape, ValueDomain::Any);
  }
  return out;
}

}  // namespace nncheck
