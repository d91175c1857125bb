// The block prior. Each row: the block, where it comes from (the networks that have it and the
// rewrites written for it, by the names ONNX Runtime 1.30, TorchScript 1.13's freeze and
// optimize_for_inference, and MLIR's TOSA canonicalization give them), and its nodes.
#include "generators/blocks.h"

#include <algorithm>

namespace nncheck::gen {
namespace {

using R = BlockRef;

Attribute ints(const char* name, std::vector<int64_t> v) { return Attribute::ofInts(name, v); }
Attribute integer(const char* name, int64_t v) { return Attribute::ofInt(name, v); }

// Conv, then BatchNormalization, then an activation.
Block convBn(const std::string& name, const std::string& activation,
             std::vector<std::pair<size_t, double>> constants, const std::string& rewrites) {
  std::vector<BlockStep> steps = {{"Conv"}, {"BatchNormalization"}};
  if (!activation.empty()) steps.push_back({activation, {}, std::move(constants)});
  return {name, "ResNet, MobileNet and every CNN export; " + rewrites, steps};
}

std::vector<Block> table() {
  return {
      convBn("conv-bn-relu", "Relu", {},
             "ORT ConvBNFusion, ConvActivationFusion; TorchScript freeze's FoldFrozenConvBatchnorm "
             "and optimize_for_inference's MKLDNN conv+relu"),
      convBn("conv-bn-relu6", "Clip", {{1, 0.0}, {2, 6.0}},
             "MobileNetV2's ReLU6 as Clip with constant bounds; ORT ConvActivationFusion (Clip), "
             "TorchScript hardtanh"),
      convBn("conv-bn-hardsigmoid", "HardSigmoid", {},
             "MobileNetV3's gates; ORT ConvActivationFusion (HardSigmoid)"),
      convBn("conv-bn-hardswish", "HardSwish", {}, "MobileNetV3; TorchScript hardswish"),
      {"conv-residual",
       "ResNet's basic block: Conv, BatchNormalization, Add of the block's input, Relu; ORT "
       "ConvAddFusion, ConvAddActivationFusion; TorchScript FoldFrozenConvAddOrSub",
       {{"Conv", {}, {}, {}, true}, {"BatchNormalization"}, {"Add", {{1, R::input()}}}, {"Relu"}}},
      {"conv-mul-add",
       "a scale and shift after Conv (a folded norm); ORT ConvMulFusion, ConvAddFusion; "
       "TorchScript FoldFrozenConvMulOrDiv, FoldFrozenConvAddOrSub",
       {{"Conv"}, {"Mul"}, {"Add"}}},
      {"matmul-add-relu",
       "a Linear layer with bias and activation as exporters write it; ORT MatMulAddFusion then "
       "GemmActivationFusion, MatMulActivationFusion; TorchScript linear",
       {{"MatMul"}, {"Add"}, {"Relu"}}},
      {"gemm-relu",
       "an MLP layer; ORT GemmActivationFusion; TorchScript addmm + relu",
       {{"Gemm"}, {"Relu"}}},
      {"gemm-chain",
       "an MLP's stacked layers; ORT GemmTransposeFusion, GemmSumFusion",
       {{"Gemm"}, {"Gemm"}}},
      {"flatten-gemm", "a classifier head; TorchScript flatten + linear", {{"Flatten"}, {"Gemm"}}},
      {"attention",
       "scaled dot-product attention: MatMul, scale, Softmax over the last axis, MatMul; ORT "
       "MatMulScaleFusion, AttentionFusion, BiasSoftmaxFusion",
       {{"MatMul"},
        {"Div", {}, {{1, 8.0}}},
        {"Softmax", {}, {}, {integer("axis", -1)}},
        {"MatMul"}}},
      {"layer-norm",
       "LayerNormalization as exporters before opset 17 write it (BERT, GPT-2); ORT "
       "LayerNormFusion, SimplifiedLayerNormFusion",
       {{"ReduceMean", {}, {}, {ints("axes", {-1}), integer("keepdims", 1)}},
        {"Sub", {{0, R::input()}, {1, R::output(0)}}},
        {"Pow", {}, {{1, 2.0}}},
        {"ReduceMean", {}, {}, {ints("axes", {-1}), integer("keepdims", 1)}},
        {"Add", {}, {{1, 1e-5}}},
        {"Sqrt"},
        {"Div", {{0, R::output(1)}, {1, R::output(5)}}},
        {"Mul"},
        {"Add"}}},
      {"gelu-erf",
       "Gelu in its Erf form, as BERT exports it: x * 0.5 * (1 + erf(x / sqrt(2))); ORT "
       "GeluFusion, BiasGeluFusion",
       {{"Div", {}, {{1, 1.4142135623730951}}},
        {"Erf"},
        {"Add", {}, {{1, 1.0}}},
        {"Mul", {{0, R::input()}, {1, R::output(2)}}},
        {"Mul", {}, {{1, 0.5}}}}},
      {"reshape-transpose-reshape",
       "multi-head attention's head split and merge, ShuffleNet's channel shuffle; ORT "
       "ReshapeFusion, TransposeOptimizer; MLIR tosa.reshape and tosa.transpose folds",
       {{"Reshape"}, {"Transpose"}, {"Reshape"}}},
      {"transpose-transpose",
       "layout changes back to back (NCHW/NHWC); ORT TransposeOptimizer; MLIR tosa.transpose "
       "canonicalization",
       {{"Transpose"}, {"Transpose"}}},
      {"pad-conv",
       "explicit padding before a convolution (TensorFlow exports); ORT PadFusion",
       {{"Pad"}, {"Conv"}}},
      {"pad-maxpool", "explicit padding before pooling; ORT PadFusion", {{"Pad"}, {"MaxPool"}}},
      {"pad-averagepool",
       "explicit padding before pooling; ORT PadFusion",
       {{"Pad"}, {"AveragePool"}}},
      {"branches-concat",
       "Inception's and DenseNet's branches of one input, concatenated",
       {{"Relu"},
        {"Sigmoid", {{0, R::input()}}},
        {"Concat", {{0, R::output(0)}, {1, R::output(1)}}}}},
      {"split-concat",
       "ShuffleNetV2's channel split, the parts put back together",
       {{"Split"}, {"Concat", {{0, R::output(0, 0)}, {1, R::output(0, 1)}}}}},
      {"cast-cast",
       "dtype round trips of mixed-precision exports; ORT CastElimination, "
       "RemoveDuplicateCastTransformer",
       {{"Cast"}, {"Cast"}}},
      {"squeeze-unsqueeze",
       "axis bookkeeping of exporters; ORT UnsqueezeElimination",
       {{"Squeeze"}, {"Unsqueeze"}}},
      {"unsqueeze-squeeze",
       "axis bookkeeping of exporters; ORT UnsqueezeElimination",
       {{"Unsqueeze"}, {"Squeeze"}}},
      {"qdq-conv",
       "a statically quantized Conv in QDQ form; ORT QDQSelectorActionTransformer, "
       "QDQPropagationTransformer, DoubleQDQPairsRemover",
       {{"QuantizeLinear"},
        {"DequantizeLinear", {{1, R::inputOf(0, 1)}, {2, R::inputOf(0, 2)}}},
        {"Conv"},
        {"QuantizeLinear"},
        {"DequantizeLinear", {{1, R::inputOf(3, 1)}, {2, R::inputOf(3, 2)}}}}},
      {"qdq-matmul",
       "a statically quantized MatMul in QDQ form; ORT QDQSelectorActionTransformer, "
       "MatMulIntegerToFloatFusion",
       {{"QuantizeLinear"},
        {"DequantizeLinear", {{1, R::inputOf(0, 1)}, {2, R::inputOf(0, 2)}}},
        {"MatMul"},
        {"QuantizeLinear"},
        {"DequantizeLinear", {{1, R::inputOf(3, 1)}, {2, R::inputOf(3, 2)}}}}},
  };
}

// Backtracking over nodes: step s of b mapped to a node of g, wired as b says.
bool matchFrom(const Graph& g, const Block& b, size_t s, std::vector<const Node*>& chosen) {
  if (s == b.steps.size()) return true;
  const BlockStep& step = b.steps[s];
  for (const Node& n : g.nodes) {
    if (n.opType != step.op) continue;
    if (std::find(chosen.begin(), chosen.end(), &n) != chosen.end()) continue;
    auto reads = [&](size_t input, const std::string& value) {
      return input < n.inputs.size() && !value.empty() && n.inputs[input] == value;
    };
    auto valueOf = [&](const BlockRef& r) -> std::string {
      const Node* at = r.kind == BlockRef::Kind::BlockInput ? chosen[0] : chosen[r.step];
      const auto& names = r.kind == BlockRef::Kind::Output ? at->outputs : at->inputs;
      const size_t k = r.kind == BlockRef::Kind::BlockInput ? 0 : r.index;
      return k < names.size() ? names[k] : std::string();
    };
    bool wired = true;
    bool input0Given = false;
    for (const auto& [input, ref] : step.reads) {
      if (s == 0) break;  // the first node's reads are what defines the block's input
      wired = wired && reads(input, valueOf(ref));
      input0Given = input0Given || input == 0;
    }
    if (s > 0 && !input0Given) wired = wired && reads(0, chosen[s - 1]->outputs.at(0));
    if (!wired) continue;
    chosen.push_back(&n);
    if (matchFrom(g, b, s + 1, chosen)) return true;
    chosen.pop_back();
  }
  return false;
}

}  // namespace

const std::vector<Block>& blockPrior() {
  static const std::vector<Block> prior = table();
  return prior;
}

bool containsBlock(const Graph& g, const Block& b) {
  std::vector<const Node*> chosen;
  return matchFrom(g, b, 0, chosen);
}

}  // namespace nncheck::gen
