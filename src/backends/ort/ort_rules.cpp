// ORT 1.30's rewrite rules (GenerateRewriteRules in onnxruntime/core/optimizer/
// graph_transformer_utils.cc) and what each takes out of a graph.
#include "ort/ort_rules.h"

#include <algorithm>
#include <map>
#include <set>

namespace nncheck::ort {

namespace {

struct Rule {
  Level level;
  const char* name;
  const char* removes;    // the op type the rule takes out
  const char* neighbour;  // an op type the removed node must touch; "" for any
};

constexpr Rule kRules[] = {
    {Level::Basic, "EliminateIdentity", "Identity", ""},
    {Level::Basic, "EliminateSlice", "Slice", ""},
    {Level::Basic, "UnsqueezeElimination", "Unsqueeze", ""},
    {Level::Basic, "EliminateDropout", "Dropout", ""},
    {Level::Basic, "ExpandElimination", "Expand", ""},
    {Level::Basic, "CastElimination", "Cast", ""},
    {Level::Basic, "PreShapeNodeElimination", "Cast", "Shape"},
    {Level::Basic, "NoopElimination", "Add", ""},
    {Level::Basic, "NoopElimination", "Sub", ""},
    {Level::Basic, "NoopElimination", "Mul", ""},
    {Level::Basic, "NoopElimination", "Div", ""},
    {Level::Basic, "DivMulFusion", "Mul", "Div"},
    {Level::Basic, "FuseReluClip", "Relu", "Clip"},
    {Level::Basic, "GemmSumFusion", "Sum", "Gemm"},
    {Level::Basic, "GemmTransposeFusion", "Transpose", "Gemm"},
    {Level::Basic, "NotWhereFusion", "Not", "Where"},
    {Level::Basic, "ConvAddFusion", "Add", "Conv"},
    {Level::Basic, "ConvMulFusion", "Mul", "Conv"},
    {Level::Basic, "ConvBNFusion", "BatchNormalization", "Conv"},
    {Level::Basic, "PadFusion", "Pad", ""},
    {Level::Basic, "MatmulBNFusion", "BatchNormalization", "MatMul"},
    {Level::Basic, "LabelEncoderFusion", "LabelEncoder", ""},
    {Level::Extended, "ClipQuantFusion", "Clip", "QuantizeLinear"},
    {Level::Extended, "ReluQuantFusion", "Relu", "QuantizeLinear"},
};

std::map<std::string, int> opCounts(const Graph& g) {
  std::map<std::string, int> n;
  for (const Node& node : g.nodes) ++n[node.opType];
  return n;
}

// Whether a node of type `a` reads a value a node of type `b` makes, or the other way round.
bool touches(const Graph& g, const std::string& a, const std::string& b) {
  std::map<std::string, std::string> producer;  // value -> op type
  for (const Node& n : g.nodes)
    for (const std::string& v : n.outputs) producer[v] = n.opType;
  for (const Node& n : g.nodes)
    for (const std::string& v : n.inputs) {
      const auto p = producer.find(v);
      if (p == producer.end()) continue;
      if ((n.opType == a && p->second == b) || (n.opType == b && p->second == a)) return true;
    }
  return false;
}

}  // namespace

std::vector<std::string> rewriteRules(const Config& config) { return namesAtLevel(kRules, config); }

std::vector<std::string> rulesThatFired(const Model& before, const Model& after, Level level) {
  const std::map<std::string, int> was = opCounts(before.graph), is = opCounts(after.graph);
  std::set<std::string> fired;
  for (const auto& [op, n] : was) {
    const auto now = is.find(op);
    if (now != is.end() && now->second >= n) continue;
    bool explained = false;
    for (const bool withNeighbour : {true, false}) {
      for (const Rule& r : kRules) {
        if (r.level > level || op != r.removes || (*r.neighbour != '\0') != withNeighbour) continue;
        if (withNeighbour && !touches(before.graph, op, r.neighbour)) continue;
        fired.insert(r.name);
        explained = true;
      }
      if (explained) break;
    }
  }
  return {fired.begin(), fired.end()};
}

}  // namespace nncheck::ort
