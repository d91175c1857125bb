// What every translation of ONNX to Python source shares, whatever library the source calls
// (PyTorch, JAX): a node's inputs as expressions with their static facts, the statements that
// assign its outputs, Python's literals, and the loop that names graph inputs, weights and values
// and visits each node with its emitter. The libraries' emitters build on it.
//
//   PythonBody b = translateToPython(model, "xla", emitters(), "params['", "']",
//                                    [](const Emitter& f, PythonSite s) { JaxEmit e(s); f(e); });
//   // b.lines: "v0 = jnp.maximum(a0, 0.0)", ...; b.returned: {"v0"}
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/node_reading.h"
#include "nncheck/graph.h"
#include "nncheck/tensor.h"

namespace nncheck {

// Where one node is translated: what PythonEmit reads and writes.
struct PythonSite {
  const Node& node;
  int64_t opset;
  std::vector<std::string> in;  // expressions of the inputs; "" for an absent one
  std::vector<ops::InputFacts> inFacts, outFacts;
  std::vector<std::string> outNames;  // locals of the outputs; "_unused" for an unnamed one
  std::vector<std::string>& lines;
  int& temps;
  const std::string& engine;  // named in what it refuses
};

class PythonEmit : public NodeReading {
 public:
  explicit PythonEmit(PythonSite site);

  size_t inputCount() const { return in_.size(); }
  bool has(size_t i) const { return i < in_.size() && !in_[i].empty(); }
  const std::string& in(size_t i) const;  // the expression of input i
  DType dtype(size_t i) const { return facts(i).dtype; }
  const Shape& shape(size_t i) const { return facts(i).shape; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(shape(i).size()); }

  const std::string& out(size_t k) const { return outNames_.at(k); }
  bool outUsed(size_t k) const { return k < outNames_.size() && outNames_[k] != "_unused"; }

  // Output k = expr.
  void assign(size_t k, const std::string& expr);
  // A fresh local holding expr; returns its name.
  std::string let(const std::string& expr);

 private:
  const ops::InputFacts& facts(size_t i) const;
  std::vector<std::string> in_;
  std::vector<std::string> outNames_;
  std::vector<std::string>& lines_;
  int& temps_;
};

// An initializer the source reads by name.
struct PythonWeight {
  std::string name;         // "w0"
  std::string initializer;  // its name in the model
  Tensor value;
};

struct PythonBody {
  std::vector<std::string> inputs;    // the graph inputs, as arguments a0, a1, ... in order
  std::vector<PythonWeight> weights;  // the initializers that are not graph inputs
  std::vector<std::string> lines;     // the statements, in node order
  std::vector<std::string> outputs;   // the graph outputs
  std::vector<std::string> returned;  // their expressions, in order
};

// The names a translation gives values as it goes: graph inputs a0.., weights w0.. (read as
// weightBefore + "w0" + weightAfter), node outputs v0.., temporaries _t0...
class PythonNaming {
 public:
  PythonNaming(const Model& model, const std::string& engine, std::string weightBefore,
               std::string weightAfter);
  const std::map<std::string, ops::InputFacts>& facts() const { return facts_; }
  // Names node n's outputs and gives the site its emitter writes at.
  PythonSite site(const Node& n, std::vector<ops::InputFacts> inFacts,
                  std::vector<ops::InputFacts> outFacts);
  PythonBody finish();  // the graph outputs' expressions

 private:
  const Model& model_;
  const std::string& engine_;
  std::map<std::string, ops::InputFacts> facts_;
  std::map<std::string, std::string> expr_;  // ONNX value -> Python expression
  PythonBody body_;
  int temps_ = 0, values_ = 0;
};

// The whole body: each node with its emitter from `table` (Unsupported naming the engine, the op
// and the node when it has none), visited as visit(emitter, site).
template <class Table, class Visit>
PythonBody translateToPython(const Model& model, const std::string& engine, const Table& table,
                             const std::string& weightBefore, const std::string& weightAfter,
                             Visit&& visit) {
  PythonNaming naming(model, engine, weightBefore, weightAfter);
  forEachNodeToTranslate(
      model.graph, naming.facts(), table, engine,
      [&](const Node& n, const typename Table::mapped_type& emitter,
          std::vector<ops::InputFacts> inFacts, std::vector<ops::InputFacts> outFacts) {
        visit(emitter, naming.site(n, std::move(inFacts), std::move(outFacts)));
      });
  return naming.finish();
}

// Literals.
std::string pyFloat(double v);                       // "0.5", "1e-05", "float('inf')"
std::string pyInts(const std::vector<int64_t>& v);   // "[1, 2]"
std::string pyTuple(const std::vector<int64_t>& v);  // "(1, 2)", "(1,)", "()"

}  // namespace nncheck
