#include "cli/generation_options.h"

#include <sstream>

#include "nncheck/error.h"

namespace nncheck::cli {
namespace {

// "NAME=NUMBER" items of a comma-separated list, for `option`.
std::vector<std::pair<std::string, double>> weightItems(const std::string& text,
                                                        const std::string& option,
                                                        const std::string& form) {
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& item : splitList(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw Error(option + ": '" + item + "' is not " + form);
    size_t used = 0;
    double w = 0;
    try {
      w = std::stod(item.substr(eq + 1), &used);
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used == 0 || eq + 1 + used != item.size())
      throw Error(option + ": '" + item + "' has no number after '='");
    out.emplace_back(item.substr(0, eq), w);
  }
  return out;
}

}  // namespace

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void addGenerationOptions(CLI::App* cmd, GenerationOptions& o) {
  cmd->add_option("--dtypes", o.dtypes,
                  "comma-separated dtypes of graph values (default: float32,int64,bool)");
  cmd->add_option("--op-weights", o.opWeights,
                  "relative op frequencies, e.g. Conv=3,Relu=0.5 (default 1)");
  cmd->add_option("--pair-weights", o.pairWeights,
                  "make a producer feed a consumer more often, e.g. "
                  "MatMul>Add=10,Conv>BatchNormalization=10");
  cmd->add_option("--seeds", o.seeds,
                  "a folder of seed patterns (case folders such as a corpus, or *.onnx files) "
                  "planted inside random surroundings");
  cmd->add_option("--seed-share", o.seedShare, "share of models grown around a seed pattern")
      ->capture_default_str();
  cmd->add_option("--constant-share", o.constantShare,
                  "share of insertions that grow a constant subexpression (a node reading only "
                  "initializers, computing one the model reads)")
      ->capture_default_str();
  cmd->add_option("--block-share", o.blockShare,
                  "share of insertions that grow a block real networks are made of (Conv -> "
                  "BatchNormalization -> Relu, attention, ...; gen --stats lists them)")
      ->capture_default_str();
  cmd->add_flag("--control-flow", o.controlFlow,
                "grow If, Loop and Scan nodes too, each body a small graph of values it captures");
}

void applyGenerationOptions(const GenerationOptions& o, GeneratorConfig& cfg) {
  if (!o.dtypes.empty()) {
    cfg.dtypes.clear();
    for (const std::string& d : splitList(o.dtypes)) {
      try {
        cfg.dtypes.push_back(dtypeFromName(d));
      } catch (const Error& e) {
        throw Error(std::string("--dtypes: ") + e.what());
      }
    }
  }
  for (const auto& [op, w] : weightItems(o.opWeights, "--op-weights", "OP=WEIGHT"))
    cfg.opWeights[op] = w;
  for (const auto& [pair, w] :
       weightItems(o.pairWeights, "--pair-weights", "PRODUCER>CONSUMER=WEIGHT")) {
    const size_t gt = pair.find('>');
    if (gt == std::string::npos || gt == 0 || gt + 1 == pair.size())
      throw Error("--pair-weights: '" + pair + "' is not PRODUCER>CONSUMER");
    cfg.pairWeights[{pair.substr(0, gt), pair.substr(gt + 1)}] = w;
  }
  cfg.seedShare = o.seedShare;
  cfg.constantShare = o.constantShare;
  cfg.blockShare = o.blockShare;
  cfg.controlFlow = cfg.controlFlow || o.controlFlow;
  validateConfig(cfg);  // names an unknown op before seeds are loaded
  if (!o.seeds.empty()) {
    try {
      cfg.seeds = loadSeedPatterns(o.seeds, cfg);
    } catch (const Error& e) {
      throw Error(std::string("--seeds: ") + e.what());
    }
  }
}

}  // namespace nncheck::cli
