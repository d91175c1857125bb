#include "backends/node_reading.h"

#include <algorithm>
#include <numeric>

#include "nncheck/error.h"

namespace nncheck {

NodeReading::NodeReading(const Node& node, int64_t opset, std::vector<ops::InputFacts> inputs,
                         std::vector<ops::InputFacts> outputs, std::string engine)
    : node_(node),
      opset_(opset),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      engine_(std::move(engine)) {}

const Tensor* NodeReading::constant(size_t i) const {
  return i < inputs_.size() ? inputs_[i].value : nullptr;
}

std::vector<int64_t> NodeReading::constInts(size_t i) const {
  const Tensor* t = constant(i);
  if (!t) unsupported("input " + std::to_string(i) + " is computed, not an initializer");
  return t->toInt64s();
}

int64_t NodeReading::attrInt(const char* name, int64_t fallback) const {
  const Attribute* a = node_.attribute(name);
  return a ? a->i : fallback;
}

float NodeReading::attrFloat(const char* name, float fallback) const {
  const Attribute* a = node_.attribute(name);
  return a ? a->f : fallback;
}

std::string NodeReading::attrString(const char* name, const std::string& fallback) const {
  const Attribute* a = node_.attribute(name);
  return a ? a->s : fallback;
}

std::vector<int64_t> NodeReading::attrInts(const char* name, std::vector<int64_t> fallback) const {
  const Attribute* a = node_.attribute(name);
  return a ? a->ints : fallback;
}

void NodeReading::unsupported(const std::string& why) const {
  throw Unsupported(engine_, engine_ + ": " + node_.opType + " node '" + node_.name + "': " + why);
}

std::vector<int64_t> NodeReading::transposePerm() const {
  std::vector<int64_t> perm = attrInts("perm");
  if (perm.empty() && !inputs_.empty()) {
    perm = allAxes(static_cast<int64_t>(inputs_[0].shape.size()));
    std::reverse(perm.begin(), perm.end());
  }
  return perm;
}

std::vector<int64_t> normAxes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) a = normAxis(a, rank);
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::vector<int64_t> allAxes(int64_t rank) {
  std::vector<int64_t> a(static_cast<size_t>(rank));
  std::iota(a.begin(), a.end(), 0);
  return a;
}

}  // namespace nncheck
