// The block prior: every block documented, every block grown whole where its ops are allowed,
// and containsBlock strict about the wiring.
#include "generators/blocks.h"

#include <gtest/gtest.h>

#include <set>

#include "nncheck/generator.h"
#include "nncheck/validity.h"

namespace nncheck {
namespace {

// Each block, alone with its ops and a few more, grows whole in some of 200 models, valid.
TEST(Blocks, EveryBlockOfThePriorGrowsWhole) {
  for (const gen::Block& b : gen::blockPrior()) {
    EXPECT_FALSE(b.source.empty()) << b.name << ": where it comes from";
    GeneratorConfig cfg;
    cfg.blockShare = 0.8;
    cfg.nodes = static_cast<int>(b.steps.size()) + 2;
    std::set<std::string> ops = {"Relu", "Add"};
    for (const gen::BlockStep& s : b.steps) ops.insert(s.op);
    cfg.ops.assign(ops.begin(), ops.end());
    cfg.dtypes = {DType::Float32, DType::Int64, DType::UInt8, DType::Int8};
    int whole = 0;
    for (uint64_t seed = 0; seed < 200 && whole == 0; ++seed) {
      const Model m = generateModel(cfg, seed);
      if (auto why = whyInvalid(m)) FAIL() << b.name << ", seed " << seed << ": " << *why;
      whole += gen::containsBlock(m.graph, b);
    }
    EXPECT_GT(whole, 0) << b.name << " never grew whole";
  }
}

// Blocks follow the config's op weights: an op weighted 0 is never grown, not even in a block.
TEST(Blocks, AnOpWeightedZeroIsNeverGrownInABlock) {
  GeneratorConfig cfg;
  cfg.blockShare = 1;
  cfg.opWeights = {{"BatchNormalization", 0.0}};
  int convs = 0;
  for (uint64_t seed = 0; seed < 100; ++seed)
    for (const Node& n : generateModel(cfg, seed).graph.nodes) {
      EXPECT_NE(n.opType, "BatchNormalization") << "seed " << seed;
      convs += n.opType == "Conv";
    }
  EXPECT_GT(convs, 0) << "blocks starting with the ops it may use still grow";
}

Node node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  return Node::make(op, std::move(in), std::move(out));
}

TEST(Blocks, ContainsBlockFollowsTheWiring) {
  const gen::Block* convBnRelu = nullptr;
  const gen::Block* layerNorm = nullptr;
  for (const gen::Block& b : gen::blockPrior()) {
    if (b.name == "conv-bn-relu") convBnRelu = &b;
    if (b.name == "layer-norm") layerNorm = &b;
  }
  ASSERT_TRUE(convBnRelu && layerNorm);
  Graph g;
  g.nodes = {node("Conv", {"x", "w"}, {"c"}),
             node("BatchNormalization", {"c", "s", "b", "m", "v"}, {"n"}),
             node("Relu", {"n"}, {"y"})};
  EXPECT_TRUE(gen::containsBlock(g, *convBnRelu));
  g.nodes[2].inputs = {"c"};  // Relu reads the Conv, not the normalization
  EXPECT_FALSE(gen::containsBlock(g, *convBnRelu));
  // LayerNormalization's chain: Sub reads the block's input and the mean, Div the centred values
  // and the deviation.
  Graph ln;
  ln.nodes = {node("ReduceMean", {"x"}, {"mean"}), node("Sub", {"x", "mean"}, {"d"}),
              node("Pow", {"d", "two"}, {"sq"}),   node("ReduceMean", {"sq"}, {"var"}),
              node("Add", {"var", "eps"}, {"ve"}), node("Sqrt", {"ve"}, {"sd"}),
              node("Div", {"d", "sd"}, {"z"}),     node("Mul", {"z", "gamma"}, {"zg"}),
              node("Add", {"zg", "beta"}, {"y"})};
  EXPECT_TRUE(gen::containsBlock(ln, *layerNorm));
  ln.nodes[1].inputs = {"other", "mean"};
  EXPECT_FALSE(gen::containsBlock(ln, *layerNorm));
}

}  // namespace
}  // namespace nncheck
