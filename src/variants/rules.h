// The rewrite table's insides: where a rewrite applies (a Site), and what each rule does there.
//
//   for (const RuleImpl& r : ruleTable()) if (int n = r.forms(site)) r.apply(edit, site, 0);
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "nncheck/variants.h"
#include "ops/infer.h"

namespace nncheck::variants {

// A value a node of the top-level graph computes, with what nncheck's rules know of the model.
struct Site {
  const Model& model;
  const std::map<std::string, ops::InputFacts>& facts;
  std::string at;   // the value
  size_t node = 0;  // its producer, an index into model.graph.nodes
  DType dtype = DType::Undefined;
  Shape shape;
  int64_t opset = 0;
  const VariantLimits* limits = nullptr;  // when drawing: what the variant may hold

  // Whether the variant may hold values of this dtype.
  bool allows(DType t) const;
  const Node& producer() const { return model.graph.nodes[node]; }
  const ops::InputFacts* fact(const std::string& value) const;
  // The nodes reading the value (top level), and whether it is a graph output.
  std::vector<size_t> readers(const std::string& value) const;
  bool isGraphOutput(const std::string& value) const;
};

// Builds a rewrite into the model: fresh names, initializers, and the nodes that replace the
// site's producer or follow it.
class Edit {
 public:
  explicit Edit(Model& model);
  // A value, initializer or node name the model does not use yet.
  std::string fresh(const std::string& hint);
  // An initializer holding `value`, named afresh.
  std::string constant(const std::string& hint, Tensor value);
  std::string ints(const std::string& hint, const std::vector<int64_t>& values);
  // A node to put in place (named afresh); returns its output, named afresh unless given.
  std::string node(const std::string& op, std::vector<std::string> inputs,
                   std::vector<Attribute> attributes = {}, std::string output = "");
  // The same with several outputs, all named by the caller.
  void node(const std::string& op, std::vector<std::string> inputs,
            std::vector<Attribute> attributes, std::vector<std::string> outputs);
  // Renames the site's value where its producer writes it and returns the new name: the nodes
  // made then compute the value again under its own name, after the producer (insertAfter).
  std::string detach(const Site& site);
  // Puts the nodes made so far right after node `index`, or in its place.
  void insertAfter(size_t index);
  void replace(size_t index);
  // Removes node `index` (one the new nodes no longer need), after insertAfter or replace.
  void remove(size_t index);

 private:
  Model& model_;
  std::set<std::string> used_;
  std::vector<Node> nodes_;
};

struct RuleImpl {
  RewriteRule info;
  // The ops it may add to the model (an engine must take them all).
  std::vector<std::string> ops;
  // How many forms the rule has at the site; 0: it does not apply there.
  int (*forms)(const Site&);
  // Rewrites the model (a copy the Edit holds) at the site in form `form` < forms(site).
  void (*apply)(Edit&, const Site&, int64_t form);
};

const std::vector<RuleImpl>& ruleTable();

// A tensor of a compute dtype holding `values` (-0.0 keeps its sign in float dtypes), and a
// scalar.
Tensor tensorOf(DType dtype, Shape shape, const std::vector<double>& values);
Tensor scalarOf(DType dtype, double v);

}  // namespace nncheck::variants
