#include "render/dot.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ops/infer.h"
#include "ops/op_spec.h"
#include "render/picture.h"

namespace nncheck::render {
namespace {

// Initializers of at most this many elements are drawn by value.
constexpr int64_t kShownByValue = 8;
// Attribute texts past this many characters are cut (a Constant's tensor, a long list).
constexpr size_t kAttributeChars = 48;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string typeText(DType dtype, const Shape& shape) {
  return std::string(dtypeName(dtype)) + shapeToString(shape);
}

std::string cut(std::string s) {
  if (s.size() > kAttributeChars) s = s.substr(0, kAttributeChars - 3) + "...";
  return s;
}

class Writer {
 public:
  Writer(const Model& m, const DrawOptions& o) : model_(m), options_(o), opset_(m.defaultOpset()) {}

  std::string write() {
    out_
        << "digraph model {\n"
           "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=0.35];\n"
           "  node [fontname=\"Helvetica\", fontsize=10, penwidth=1];\n"
           "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n";
    std::map<std::string, ops::InputFacts> facts;
    try {
      facts = ops::inferModel(model_);
    } catch (const std::exception&) {
      // A model our rules reject is still drawn, with the types it declares.
    }
    Scope top{nullptr, {}, facts};
    graph(model_.graph, top, "  ", true);
    out_ << captures_.str() << "}\n";
    return out_.str();
  }

 private:
  struct Scope {
    const Scope* parent;
    std::map<std::string, std::string> producer;  // value -> DOT id of what computes it
    std::map<std::string, ops::InputFacts> facts;
    const std::string* find(const std::string& name) const {
      for (const Scope* s = this; s; s = s->parent)
        if (auto it = s->producer.find(name); it != s->producer.end()) return &it->second;
      return nullptr;
    }
    std::string type(const std::string& name) const {
      for (const Scope* s = this; s; s = s->parent)
        if (auto it = s->facts.find(name); it != s->facts.end())
          return typeText(it->second.dtype, it->second.shape);
      return "";
    }
  };

  std::string id(char kind) { return std::string(1, kind) + std::to_string(next_++); }

  // A note broken into lines of about 60 characters at spaces, so that a long one (a
  // divergence's detail) does not stretch the drawing to a strip.
  std::string note(const std::string& value) const {
    auto it = options_.notes.find(value);
    if (it == options_.notes.end()) return "";
    std::string out = "\n";
    size_t line = 0;
    for (char c : it->second) {
      if (c == ' ' && line >= 60) {
        out += '\n';
        line = 0;
        continue;
      }
      out += c;
      line = c == '\n' ? 0 : line + 1;
    }
    return out;
  }

  void graph(const Graph& g, Scope& scope, const std::string& indent, bool top) {
    for (const ValueInfo* in : g.feedInputs()) {
      const std::string v = id('v');
      const std::string type =
          in->shape() ? typeText(in->dtype, *in->shape()) : scope.type(in->name);
      out_ << indent << v << " [shape=ellipse, style=filled, fillcolor=\""
           << (top ? "#dbe9f6" : "#e8f0f8") << "\", label=\""
           << escaped(in->name + "\n" + type + note(in->name)) << "\"];\n";
      scope.producer[in->name] = v;
    }
    for (const Initializer& w : g.initializers) {
      const std::string v = id('w');
      const bool small = w.value.size() <= kShownByValue;
      const std::string text = small ? w.name + " = " + tensorToString(w.value, kShownByValue)
                                     : w.name + "\n" + typeText(w.value.dtype(), w.value.shape());
      out_ << indent << v << " [shape=" << (small ? "note" : "box")
           << ", style=filled, fillcolor=\"#eeeeee\", fontsize=9, label=\"" << escaped(text)
           << "\"];\n";
      scope.producer[w.name] = v;
    }
    for (const Node& n : g.nodes) node(n, scope, indent);
    if (!top) return;
    for (const ValueInfo& o : g.outputs) {
      const std::string v = id('o');
      const std::string type = o.shape() ? typeText(o.dtype, *o.shape()) : scope.type(o.name);
      const bool noted = options_.notes.count(o.name) > 0;
      out_ << indent << v << " [shape=ellipse, style=filled, fillcolor=\""
           << (noted ? "#f4cccc" : "#d9ead3") << "\", label=\""
           << escaped(o.name + "\n" + type + note(o.name)) << "\"];\n";
      if (const std::string* from = scope.find(o.name))
        out_ << indent << *from << " -> " << v << ";\n";
    }
  }

  void node(const Node& node, Scope& scope, const std::string& indent) {
    const std::string v = id('n');
    const ops::OpSpec* spec = nullptr;
    try {
      spec = &ops::specFor(node, opset_);
    } catch (const std::exception&) {
      // An op outside the library is drawn with every attribute.
    }
    std::string label = node.opType + (node.name.empty() ? "" : " '" + node.name + "'");
    for (const Attribute& a : node.attributes) {
      if (a.kind == Attribute::Kind::Graph) continue;  // drawn as a cluster
      const ops::AttrSpec* as = spec ? spec->attrSpec(a.name) : nullptr;
      if (as && as->defaultValue && *as->defaultValue == a) continue;
      label += '\n';
      label += cut(attributeToString(a));
    }
    const bool highlighted = !options_.highlightOutput.empty() &&
                             std::find(node.outputs.begin(), node.outputs.end(),
                                       options_.highlightOutput) != node.outputs.end();
    out_ << indent << v << " [shape=box, style=\"rounded,filled\", fillcolor=\""
         << (highlighted ? "#f4a6a6\", penwidth=3, color=\"#cc0000" : "#fff2cc") << "\", label=\""
         << escaped(label) << "\"];\n";
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      if (in.empty()) continue;
      const std::string* from = scope.find(in);
      if (!from) continue;  // undefined: the validity check names it, the picture leaves it out
      // A captured value's edge is written outside every cluster: an edge written inside one
      // makes its tail a member too, and a node in two clusters makes Graphviz 2.42's dot free
      // memory twice (a Loop whose body captures a value another body reads).
      const bool captured = !scope.producer.count(in);
      (captured ? captures_ : out_) << (captured ? "  " : indent) << *from << " -> " << v
                                    << " [label=\"" << escaped(scope.type(in) + note(in)) << "\""
                                    << (captured ? ", style=dashed" : "") << "];\n";
    }
    for (const Attribute& a : node.attributes)
      for (const Graph& body : a.graphs) cluster(body, a.name, node, v, scope, indent);
    for (const std::string& o : node.outputs)
      if (!o.empty()) scope.producer[o] = v;
  }

  // A body as a cluster: its own inputs (paler than the graph's), initializers and nodes; what it
  // captures comes in by dashed edges from the enclosing graphs, and its outputs go to the node
  // that owns it.
  void cluster(const Graph& body, const std::string& attr, const Node& owner,
               const std::string& ownerId, const Scope& scope, const std::string& indent) {
    std::map<std::string, ops::InputFacts> facts;
    std::map<std::string, ops::InputFacts> outer;
    for (const Scope* s = &scope; s; s = s->parent)
      for (const auto& [name, f] : s->facts) outer.emplace(name, f);
    try {
      facts = ops::inferGraph(body, outer, opset_);
    } catch (const std::exception&) {
      // Declared types only.
    }
    Scope inner{&scope, {}, std::move(facts)};
    out_ << indent << "subgraph cluster_" << next_++ << " {\n"
         << indent << "  label=\"" << escaped(attr + " of " + owner.opType) << "\";\n"
         << indent << "  style=\"rounded,dashed\"; color=\"#888888\"; fontsize=10;\n";
    graph(body, inner, indent + "  ", false);
    out_ << indent << "}\n";
    for (const ValueInfo& o : body.outputs)
      if (const std::string* from = inner.find(o.name))
        out_ << indent << *from << " -> " << ownerId << " [style=dotted, arrowhead=empty, label=\""
             << escaped(o.name) << "\"];\n";
  }

  const Model& model_;
  const DrawOptions& options_;
  int64_t opset_;
  std::ostringstream out_;
  std::ostringstream captures_;  // edges of captured values, written at the top level
  int next_ = 0;
};

}  // namespace

std::string modelToDot(const Model& model, const DrawOptions& options) {
  return Writer(model, options).write();
}

}  // namespace nncheck::render
