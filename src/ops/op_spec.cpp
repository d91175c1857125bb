#include "ops/op_spec.h"

#include <limits>
#include <sstream>

#include "nncheck/error.h"

namespace nncheck::ops {
namespace {

std::string nodeName(const OpSpec& spec, const Node& node) {
  return node.name.empty() ? spec.type : spec.type + " '" + node.name + "'";
}

// The node's attribute, else the spec's default; throws when neither exists.
const Attribute& resolve(const OpSpec& spec, const Node& node, std::string_view name) {
  if (const Attribute* a = node.attribute(name)) return *a;
  const AttrSpec* as = spec.attrSpec(name);
  if (!as)
    throw Error(nodeName(spec, node) + ": op spec declares no attribute '" + std::string(name) +
                "'");
  if (!as->defaultValue)
    throw ShapeError(nodeName(spec, node) + ": attribute '" + std::string(name) + "' is required");
  return *as->defaultValue;
}

const Attribute& resolveKind(const OpSpec& spec, const Node& node, std::string_view name,
                             Attribute::Kind kind) {
  const Attribute& a = resolve(spec, node, name);
  if (a.kind != kind)
    throw ShapeError(nodeName(spec, node) + ": attribute '" + std::string(name) + "' is " +
                     std::string(attributeKindName(a.kind)) + ", expected " +
                     std::string(attributeKindName(kind)));
  return a;
}

}  // namespace

// ---------------- Rule ----------------

template <class I>
bool Rule<I>::hasAttr(std::string_view name) const {
  return node_.attribute(name) != nullptr;
}
template <class I>
int64_t Rule<I>::attrInt(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::Int).i;
}
template <class I>
float Rule<I>::attrFloat(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::Float).f;
}
template <class I>
std::string Rule<I>::attrString(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::String).s;
}
template <class I>
std::vector<int64_t> Rule<I>::attrInts(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::Ints).ints;
}

template <class I>
std::vector<I> Rule<I>::symInts(std::string_view name) const {
  if (auto it = symAttrs_.find(std::string(name)); it != symAttrs_.end()) return it->second;
  const Attribute& a = resolve(spec_, node_, name);
  std::vector<I> out;
  if (a.kind == Attribute::Kind::Int)
    out.push_back(lit(a.i));
  else if (a.kind == Attribute::Kind::Ints)
    for (int64_t v : a.ints) out.push_back(lit(v));
  else
    throw ShapeError(context() + ": attribute '" + std::string(name) + "' is not an integer");
  return out;
}

template <class I>
std::string Rule<I>::context() const {
  std::ostringstream os;
  os << nodeName(spec_, node_) << " (inputs ";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (i) os << ", ";
    if (!inputs_[i].present) {
      os << "-";
      continue;
    }
    os << dtypeName(inputs_[i].dtype) << '[';
    for (size_t k = 0; k < inputs_[i].dims.size(); ++k) {
      if (k) os << ", ";
      os << inputs_[i].dims[k];
    }
    os << ']';
  }
  os << ')';
  return os.str();
}

template class Rule<int64_t>;
template class Rule<z3::expr>;

// ---------------- KernelCall ----------------

const Tensor& KernelCall::in(size_t i) const {
  if (!has(i)) throw Error(nodeName(spec_, node_) + ": input " + std::to_string(i) + " is absent");
  return *inputs_[i];
}
std::vector<Tensor> KernelCall::runSubgraph(const Graph& g,
                                            const std::vector<Tensor>& inputs) const {
  if (!runSubgraph_)
    throw Error(nodeName(spec_, node_) + ": its subgraphs need the interpreter to run them");
  return runSubgraph_(g, inputs);
}
int64_t KernelCall::attrInt(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::Int).i;
}
float KernelCall::attrFloat(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::Float).f;
}
std::string KernelCall::attrString(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::String).s;
}
std::vector<int64_t> KernelCall::attrInts(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::Ints).ints;
}
std::vector<float> KernelCall::attrFloats(std::string_view name) const {
  return resolveKind(spec_, node_, name, Attribute::Kind::Floats).floats;
}

// ---------------- OpSpec ----------------

const AttrSpec* OpSpec::attrSpec(std::string_view name) const {
  for (const AttrSpec& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

const TypeVarSpec* OpSpec::typeVar(std::string_view name) const {
  for (const TypeVarSpec& t : typeVars)
    if (t.name == name) return &t;
  return nullptr;
}

const InputSpec& OpSpec::inputSpec(size_t i) const {
  if (i < inputs.size()) return inputs[i];
  if (isVariadic()) return inputs.back();
  throw Error(type + ": has no input " + std::to_string(i));
}

size_t OpSpec::minInputs() const {
  size_t n = 0;
  for (const InputSpec& in : inputs)
    if (!in.optional) n = std::max(n, static_cast<size_t>(&in - inputs.data()) + 1);
  return n;
}

size_t OpSpec::maxInputs() const {
  return isVariadic() ? std::numeric_limits<size_t>::max() : inputs.size();
}

// ---------------- attribute constructors ----------------

AttrSpec intAttr(std::string name, int64_t def, int64_t lo, int64_t hi) {
  AttrSpec a;
  a.name = name;
  a.kind = Attribute::Kind::Int;
  a.defaultValue = Attribute::ofInt(name, def);
  a.lo = lo;
  a.hi = hi;
  return a;
}

AttrSpec intChoiceAttr(std::string name, int64_t def, std::vector<int64_t> supported) {
  AttrSpec a = intAttr(std::move(name), def, supported.front(), supported.back());
  a.intChoices = std::move(supported);
  return a;
}

AttrSpec floatAttr(std::string name, float def, double lo, double hi) {
  AttrSpec a;
  a.name = name;
  a.kind = Attribute::Kind::Float;
  a.defaultValue = Attribute::ofFloat(name, def);
  a.flo = lo;
  a.fhi = hi;
  return a;
}

AttrSpec stringAttr(std::string name, std::string def, std::vector<std::string> supported) {
  AttrSpec a;
  a.name = name;
  a.kind = Attribute::Kind::String;
  a.defaultValue = Attribute::ofString(name, std::move(def));
  a.choices = std::move(supported);
  return a;
}

AttrSpec optionalInt(std::string name, int64_t lo, int64_t hi) {
  AttrSpec a = intAttr(std::move(name), 0, lo, hi);
  a.defaultValue.reset();
  return a;
}

AttrSpec intsAttr(std::string name) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Ints;
  return a;
}

AttrSpec symbolicInts(std::string name, int64_t lo, int64_t hi) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Ints;
  a.symbolic = true;
  a.lo = lo;
  a.hi = hi;
  return a;
}

AttrSpec symbolicInt(std::string name, int64_t def, int64_t lo, int64_t hi) {
  AttrSpec a = intAttr(std::move(name), def, lo, hi);
  a.symbolic = true;
  return a;
}

AttrSpec requiredInt(std::string name, int64_t lo, int64_t hi) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Int;
  a.required = true;
  a.lo = lo;
  a.hi = hi;
  return a;
}

AttrSpec axisAttr(std::string name, int64_t def) {
  return withSampling(intAttr(std::move(name), def, -4, 3), AttrSampling::Axis);
}

AttrSpec spatialInts(std::string name, int perAxis, int64_t lo, int64_t hi) {
  AttrSpec a = symbolicInts(std::move(name), lo, hi);
  a.perSpatialAxis = perAxis;
  return a;
}

AttrSpec withSampling(AttrSpec a, AttrSampling s) {
  a.sampling = s;
  return a;
}

const Shape& SampleContext::shape(size_t i) const {
  if (i >= inputShapes.size() || !inputShapes[i])
    throw std::logic_error(node.opType + ": sampler asked for input " + std::to_string(i) +
                           " before it was chosen");
  return *inputShapes[i];
}

int64_t SampleContext::dim(size_t i, int64_t axis, int64_t fallback) const {
  const Shape& s = shape(i);
  const int64_t r = static_cast<int64_t>(s.size());
  if (axis < 0) axis += r;
  return axis >= 0 && axis < r ? s[static_cast<size_t>(axis)] : fallback;
}

// ---------------- dtype sets ----------------

std::vector<DType> floatTypes() { return {DType::Float32, DType::Float64, DType::Float16}; }
std::vector<DType> signedNumericTypes() {
  return {DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::Int32, DType::Int64};
}
std::vector<DType> numericTypes() {
  auto t = signedNumericTypes();
  t.push_back(DType::UInt8);
  return t;
}
std::vector<DType> allComputeTypes() {
  auto t = numericTypes();
  t.push_back(DType::Bool);
  return t;
}
std::vector<DType> indexTypes() { return {DType::Int32, DType::Int64}; }
std::vector<DType> boolTypes() { return {DType::Bool}; }

// ---------------- registry ----------------

const Registry& Registry::instance() {
  static const Registry reg = [] {
    Registry r;
    registerElementwiseUnary(r);
    registerElementwiseBinary(r);
    registerCastClipWhere(r);
    registerMatMulGemm(r);
    registerConvPool(r);
    registerNormalization(r);
    registerReductions(r);
    registerShapeOps(r);
    registerIndexing(r);
    registerResize(r);
    registerShapeQueriesAndMasks(r);
    registerConstants(r);
    registerLosses(r);
    registerQuantization(r);
    registerEinsum(r);
    registerRecurrent(r);
    registerControlFlow(r);
    return r;
  }();
  return reg;
}

const OpSpec* Registry::find(std::string_view type) const {
  for (const auto& op : ops_)
    if (op->type == type) return op.get();
  return nullptr;
}

OpSpec& Registry::add(OpSpec spec) {
  if (find(spec.type)) throw std::logic_error("op " + spec.type + " registered twice");
  if (!spec.ruleConcrete || !spec.kernelFn)
    throw std::logic_error("op " + spec.type + " lacks a shape rule or a kernel");
  ops_.push_back(std::make_unique<OpSpec>(std::move(spec)));
  return *ops_.back();
}

int64_t indexBound(const Node& node, const Shape& input0) {
  const Attribute* ax = node.attribute("axis");
  int64_t axis = ax ? ax->i : 0;
  if (axis < 0) axis += static_cast<int64_t>(input0.size());
  if (axis < 0 || axis >= static_cast<int64_t>(input0.size()))
    throw Error("node '" + node.name + "' (" + node.opType + "): axis " + std::to_string(axis) +
                " outside input 0 of shape " + shapeToString(input0));
  return input0[static_cast<size_t>(axis)];
}

void wrapIndices(Tensor& indices, int64_t bound) {
  if (bound <= 0) return;
  visitCompute(indices.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      for (auto& v : indices.span<T>()) {
        const int64_t x = static_cast<int64_t>(v);
        if (x < -bound || x >= bound) v = static_cast<T>(((x % bound) + bound) % bound);
      }
  });
}

void makeIndicesValid(const OpSpec& spec, size_t i, const Node& node,
                      const std::vector<Shape>& inputShapes, Tensor& indices) {
  const InputSpec& is = spec.inputSpec(i);
  if (is.domain != ValueDomain::Indices) return;
  if (is.fixIndices)
    is.fixIndices(node, inputShapes, indices);
  else
    wrapIndices(indices, indexBound(node, inputShapes.at(0)));
}

}  // namespace nncheck::ops
