// A toy optimizing engine, standing in for a compiler team's own: it rewrites the model, then
// runs it on nncheck's reference. Levels: O0 runs the model as it is; O1 folds Relu(Relu(x))
// into Relu(x) (a correct rewrite); O2 also replaces Sigmoid by the "fast" HardSigmoid(0.25,
// 0.5), a planted bug (exact only at 0) that nncheck must find.
#pragma once

#include <nncheck/nncheck.h>

#include <map>
#include <string>
#include <vector>

namespace toy {

class Engine : public nncheck::Backend {
 public:
  explicit Engine(std::string level) : level_(std::move(level)) {
    if (level_ != "O0" && level_ != "O1" && level_ != "O2")
      throw nncheck::Error("toy engine: level '" + level_ + "': expected O0, O1 or O2");
  }
  std::string name() const override { return "toy-" + level_; }
  nncheck::Capabilities capabilities() const override {
    nncheck::Capabilities caps;
    caps.dtypes = {nncheck::DType::Float32};
    caps.ops = {"Add", "Mul", "Relu", "Sigmoid", "Tanh", "MatMul", "Transpose"};
    return caps;
  }
  nncheck::TensorMap run(const nncheck::Model& model, const nncheck::TensorMap& in) override {
    return nncheck::runReference(optimize(model), in);
  }

 private:
  nncheck::Model optimize(nncheck::Model m) const {
    if (level_ == "O0") return m;
    std::vector<nncheck::Node> kept;
    std::map<std::string, std::string> producer;  // value -> the op that computes it
    std::map<std::string, std::string> renamed;   // a folded Relu's output -> its input
    auto source = [&](const std::string& v) {
      auto it = renamed.find(v);
      return it == renamed.end() ? v : it->second;
    };
    for (nncheck::Node n : m.graph.nodes) {
      for (std::string& i : n.inputs) i = source(i);
      bool isOutput = false;
      for (const nncheck::ValueInfo& o : m.graph.outputs) isOutput |= o.name == n.outputs[0];
      if (n.opType == "Relu" && producer[n.inputs[0]] == "Relu" && !isOutput) {
        renamed[n.outputs[0]] = n.inputs[0];
        continue;
      }
      for (const std::string& o : n.outputs) producer[o] = n.opType;
      if (level_ == "O2" && n.opType == "Sigmoid") {
        n.opType = "HardSigmoid";
        n.attributes = {nncheck::Attribute::ofFloat("alpha", 0.25f),
                        nncheck::Attribute::ofFloat("beta", 0.5f)};
      }
      kept.push_back(std::move(n));
    }
    m.graph.nodes = std::move(kept);
    return m;
  }

  std::string level_;
};

}  // namespace toy
