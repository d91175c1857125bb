// The blocks real networks are made of, which optimizers are written for: one table (blocks.cpp)
// saying, for each block, its nodes, how they are wired, and where it comes from. Generation
// grows a block as a run of aimed insertions (grow_blocks.cpp), each node still drawn and judged
// by its op's rule; `nncheck gen --stats` counts the blocks a model contains (blockIn).
//
//   for (const gen::Block& b : gen::blockPrior()) std::cout << b.name << ": " << b.source;
#pragma once

#include <string>
#include <vector>

#include "nncheck/graph.h"

namespace nncheck::gen {

// A value a block's node reads: the block's input (the value its first node reads first), an
// output of an earlier node of the block, or an input of one (Dequantize reading Quantize's
// scale).
struct BlockRef {
  enum class Kind { BlockInput, Output, InputOf } kind = Kind::BlockInput;
  size_t step = 0;
  size_t index = 0;
  static BlockRef input() { return {}; }
  static BlockRef output(size_t step, size_t k = 0) { return {Kind::Output, step, k}; }
  static BlockRef inputOf(size_t step, size_t k) { return {Kind::InputOf, step, k}; }
};

struct BlockStep {
  std::string op;
  // Input index -> what it reads. Input 0 reads the previous node's output 0 unless given (the
  // first node's: a value the growth picks, the block's input).
  std::vector<std::pair<size_t, BlockRef>> reads = {};
  // Input index -> a scalar constant it reads (Clip's bounds, Gelu's sqrt(2)).
  std::vector<std::pair<size_t, double>> constants = {};
  std::vector<Attribute> attributes = {};  // set as given, the rest drawn
  bool keepsInputShape = false;  // computes a value of the block input's shape (a residual's)
};

struct Block {
  std::string name;    // "conv-bn-relu"
  std::string source;  // the rewrites written for it, and the networks it comes from
  std::vector<BlockStep> steps;
};

const std::vector<Block>& blockPrior();

// Whether `g` contains block `b` whole: nodes of its ops wired as it says (contents of
// constants and attributes aside).
bool containsBlock(const Graph& g, const Block& b);

}  // namespace nncheck::gen
