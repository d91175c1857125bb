// OpSpec: one operator, declared in one place: its signature (inputs, type variables,
// outputs), attribute domains, its shape rule (generic over the integer type, see rule.h)
// and its reference kernel.
//
//   reg.add(OpSpec("Relu", 14)
//               .types("T", floatAndSignedTypes())
//               .input("X", "T").output("Y")
//               .shapeRule(sameShapeAsInput0)
//               .kernel(unaryKernel([](auto x) { return x > 0 ? x : decltype(x)(0); })));
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"  // kernels that run long poll the reference's time limit
#include "core/rng.h"
#include "nncheck/closeness.h"
#include "nncheck/graph.h"
#include "ops/rule.h"

namespace nncheck::ops {

// How an input's contents matter to the shape rule.
enum class InputRole {
  Data,         // only its type and dims
  ShapeValues,  // int64 values that become dims (Reshape's shape, Tile's repeats): of type I
  AxesValues,   // int values that pick axes or steps: concrete even when generating
  FloatValues,  // float values that scale dims (Resize's scales): concrete
};

// Values an input needs so that the kernel runs without error.
enum class ValueDomain {
  Any,
  NonZeroIfInteger,  // a divisor: integer division by zero is an error
  Indices,           // valid indices into input 0 along the "axis" attribute (Gather)
  Positive,          // variances and the like
};

// The exclusive bound of an Indices input's values: the size of input 0 (given its shape) along
// the node's "axis" attribute (default 0, negative counts from the end).
int64_t indexBound(const Node& node, const Shape& input0);

// Integer indices made valid for a dim of size `bound`: those in [-bound, bound) stay, others
// wrap into it, so indices into a dim that shrank stay valid.
void wrapIndices(Tensor& indices, int64_t bound);

// What an Indices input's values must be for its node: fix(node, shapes of the node's inputs,
// indices) moves them there (into range for the dims they index and, where the op needs it,
// apart from each other). Unset: each wraps into input 0's dim along the node's "axis".
using IndexFix = std::function<void(const Node&, const std::vector<Shape>&, Tensor&)>;

// What a generator knows when it asks an op for a hint: the node so far (structural
// attributes chosen), the shapes of the inputs chosen so far, and the size limits.
struct SampleContext {
  Rng& rng;
  const Node& node;
  std::vector<std::optional<Shape>> inputShapes;  // by input index; nullopt: not chosen yet
  std::vector<const Tensor*> inputValues;         // contents of shape operands sampled so far
  int64_t maxDim = 8;
  int64_t maxRank = 5;
  const Shape& shape(size_t i) const;  // throws when input i has no shape yet
  // Dim `axis` of input i (negative counts from the end), or `fallback` when there is none:
  // hints must cope with any draw, the rule rejects the bad ones.
  int64_t dim(size_t i, int64_t axis, int64_t fallback = 1) const;
};

// Generation hints, written in the op's one place: the contents of a shape operand, or the
// shape of a fresh weight. A hint proposes; the shape rule decides.
using ValueSampler = std::function<Tensor(SampleContext&)>;
// Distinct axes of a rank-`rank` tensor, some written negative, at least one when rank > 0.
inline std::vector<int64_t> drawAxesSubset(Rng& rng, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a)
    if (rng.chance(0.4)) axes.push_back(rng.chance(0.3) ? a - rank : a);
  if (axes.empty() && rank > 0) axes.push_back(rng.uniform(0, rank - 1));
  return axes;
}

// The usual content of a shape operand: an int64 vector.
inline Tensor int64Vector(const std::vector<int64_t>& v) {
  return Tensor::fromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}
using ShapeSampler = std::function<Shape(SampleContext&)>;

// Where an input's values keep an op finite and well-conditioned (value search steers them
// there): lo <= x <= hi and |x| >= awayFromZero.
struct SafeRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  double awayFromZero = 0;
};

struct InputSpec {
  std::string name;
  std::string typeVar;
  bool optional = false;
  bool variadic = false;       // this and every later input (at least one)
  bool heterogeneous = false;  // variadic inputs of differing dtypes (Loop's carried values)
  InputRole role = InputRole::Data;
  bool weight = false;  // a parameter: an initializer when the generator is told so
  ValueDomain domain = ValueDomain::Any;
  ValueSampler values;            // shape operands: their contents
  ShapeSampler shape;             // fresh inputs: their shape (default: input 0's shape)
  bool generated = true;          // optional inputs a generator never sets (Resize's roi)
  bool alwaysGenerated = false;   // optional only in older versions: generators always set it
  std::optional<SafeRange> safe;  // float values only
  IndexFix fixIndices;            // ValueDomain::Indices only; see IndexFix
};

struct OutputSpec {
  std::string name;
  bool optional = false;
  int maxCount = 1;  // > 1: a variadic output list of 1..maxCount outputs (Split)
};

struct TypeVarSpec {
  std::string name;
  std::vector<DType> allowed;
};

// An attribute's declaration. `choices`/`intChoices`, when set, are the values the kernel
// supports (others are Unsupported); [lo, hi] is only where a generator samples.
// How a generator draws an attribute's value, beyond [lo, hi] and the choices.
enum class AttrSampling {
  Range,          // ints in [lo, hi] by bins, floats in [flo, fhi], strings and ints from choices
  Axis,           // an axis of input 0: [-rank, rank)
  AxisInclusive,  // [-rank, rank] (Flatten)
  Permutation,    // of input 0's axes (Transpose)
  AxesSubset,     // distinct axes of input 0 (Reduce*)
  DType,          // a dtype code among the generator's dtypes (Cast)
  Custom,         // by the spec's own `draw`, from the attributes drawn before it
  Never,          // left unset by generators
};

struct AttrSpec {
  std::string name;
  Attribute::Kind kind = Attribute::Kind::Int;
  std::optional<Attribute> defaultValue;
  bool required = false;
  bool symbolic = false;  // integer(s) that enter the shape constraints as I
  int64_t lo = 0, hi = 0;
  double flo = 0, fhi = 0;
  std::vector<std::string> choices;
  std::vector<int64_t> intChoices;
  std::vector<std::string> samples;  // strings a generator draws where any is supported (Einsum)
  AttrSampling sampling = AttrSampling::Range;
  int perSpatialAxis = 0;  // int lists: values per spatial axis of input 0 (rank - 2)
  // AttrSampling::Custom: a value for the node as drawn so far (attributes are drawn in their
  // declaration order), or nullopt to leave it unset (RNN's activations, one per direction).
  std::function<std::optional<Attribute>(Rng&, const Node&)> draw;
};

// Runs one of a node's subgraphs on values for its inputs, in the scope of the graph the node
// is in, and returns its outputs (the interpreter provides it: ops sit below the interpreter).
using SubgraphRunner = std::function<std::vector<Tensor>(const Graph&, const std::vector<Tensor>&)>;

// What a kernel sees: the node, its inputs, and outputs already shaped by the shape rule (a
// kernel may replace them: a Loop's outputs take the shapes its runs give).
class KernelCall {
 public:
  KernelCall(const OpSpec& spec, const Node& node, std::vector<const Tensor*> inputs,
             std::vector<Tensor> outputs, SubgraphRunner runSubgraph = {})
      : spec_(spec),
        node_(node),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        runSubgraph_(std::move(runSubgraph)) {}

  bool has(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const Tensor& in(size_t i) const;
  size_t inputCount() const { return inputs_.size(); }
  Tensor& out(size_t i) { return outputs_.at(i); }
  size_t outputCount() const { return outputs_.size(); }
  std::vector<Tensor>& outputs() { return outputs_; }

  int64_t attrInt(std::string_view name) const;
  float attrFloat(std::string_view name) const;
  std::string attrString(std::string_view name) const;
  std::vector<int64_t> attrInts(std::string_view name) const;
  std::vector<float> attrFloats(std::string_view name) const;
  bool hasAttr(std::string_view name) const { return node_.attribute(name) != nullptr; }
  const Node& node() const { return node_; }
  const OpSpec& spec() const { return spec_; }
  std::vector<Tensor> runSubgraph(const Graph& g, const std::vector<Tensor>& inputs) const;

 private:
  const OpSpec& spec_;
  const Node& node_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  SubgraphRunner runSubgraph_;
};

// What a gradient sees: the node's inputs and outputs as the reference computed them, dL/dY
// per element of each output, and dL/dX per element of each input to add to (null for inputs
// that take no gradient: integers, shape operands, absent ones). Attributes through kernel().
class GradCall {
 public:
  GradCall(const KernelCall& kernel, std::vector<const Tensor*> outputs,
           std::vector<const std::vector<double>*> dOutputs,
           std::vector<std::vector<double>*> dInputs)
      : kernel_(kernel),
        outputs_(std::move(outputs)),
        dOutputs_(std::move(dOutputs)),
        dInputs_(std::move(dInputs)) {}
  const KernelCall& kernel() const { return kernel_; }
  const Tensor& in(size_t i) const { return kernel_.in(i); }
  const Tensor& out(size_t j) const { return *outputs_.at(j); }
  // dL/dY_j; null when nothing downstream depends on output j.
  const std::vector<double>* dOut(size_t j) const {
    return j < dOutputs_.size() ? dOutputs_[j] : nullptr;
  }
  std::vector<double>* dIn(size_t i) const { return i < dInputs_.size() ? dInputs_[i] : nullptr; }

 private:
  const KernelCall& kernel_;
  std::vector<const Tensor*> outputs_;
  std::vector<const std::vector<double>*> dOutputs_;
  std::vector<std::vector<double>*> dInputs_;
};

// Where a rounding difference flips the result (Floor at an integer, Less at equality, ArgMax at
// a tie), value search keeps the inputs a margin away, so that a correct engine never looks
// wrong. An op's check reports each float input element that is too close, with the direction
// (+1 or -1) that moves it away.
class StabilityCall {
 public:
  StabilityCall(const KernelCall& kernel, std::function<void(size_t, int64_t, double)> report)
      : kernel_(kernel), report_(std::move(report)) {}
  const KernelCall& kernel() const { return kernel_; }
  const Tensor& in(size_t i) const { return kernel_.in(i); }
  void tooClose(size_t input, int64_t element, double direction) const {
    report_(input, element, direction);
  }

 private:
  const KernelCall& kernel_;
  std::function<void(size_t, int64_t, double)> report_;
};

// Exact: the derivative. Proxy: a stand-in where the true one is zero or undefined (Floor,
// Round: the identity; comparisons: the slope of a soft comparison), so value search still has
// a direction. Gradients into bool values are proxies whatever the kind (Where's condition).
enum class GradientKind { Exact, Proxy };

struct OpSpec {
  OpSpec(std::string type, int64_t minVersion) : type(std::move(type)), minVersion(minVersion) {}

  std::string type;
  // The oldest ONNX schema version (since_version) whose semantics the spec implements; every
  // later one up to ONNX 1.12's opset 17 is claimed too.
  int64_t minVersion;
  std::vector<TypeVarSpec> typeVars;
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::vector<AttrSpec> attrs;
  std::function<void(Rule<int64_t>&)> ruleConcrete;
  std::function<void(Rule<z3::expr>&)> ruleSymbolic;
  std::function<void(KernelCall&)> kernelFn;
  // How far a correct float32 engine may stray from the reference (which accumulates in
  // double) on this op, where it is more than the dtype's default (long sums, ...).
  std::optional<Tolerance> float32Tolerance;
  // Reverse mode, for value search; unset: gradients stop at this op.
  std::function<void(GradCall&)> gradientFn;
  GradientKind gradientKind = GradientKind::Exact;
  std::function<void(StabilityCall&)> stabilityFn;  // see StabilityCall
  // Value search keeps |Y| within this (Pow); unset: only the global bound.
  std::optional<double> outputBound;
  // Per element of output 0, the epsilons of absolute error a correct float implementation may
  // add beyond computing exactly on slightly perturbed inputs (read by runReferencePerturbed):
  // LogSoftmax's log of a sum >= 1 is off by about one however small the result; a normalization
  // computed as x a + b is off by |x a| + |b|, however well the result cancels. A product or
  // quotient downstream turns such an error into a large relative one.
  std::function<std::vector<double>(KernelCall&)> outputErrorFn;
  // Why generators never draw this op, when they cannot make it valid (empty: they do).
  std::string notGeneratedWhy;
  // ONNX 1.12's shape inference leaves some of this op's output dims unknown (Einsum's, a Loop's
  // trip count): the validity check then compares only what ONNX gives, here and downstream.
  bool onnxLeavesDimsUnknown = false;
  // Output 0 from the node and its inputs' shapes alone (Shape, Size): it is also the kernel, and
  // lets static inference know the output's contents when the inputs' contents are not known.
  std::function<Tensor(const Node&, const std::vector<Shape>&)> valueFromShapesFn;

  // --- builder ---
  OpSpec& types(std::string name, std::vector<DType> allowed) {
    typeVars.push_back({std::move(name), std::move(allowed)});
    return *this;
  }
  OpSpec& input(std::string name, std::string typeVar, InputRole role = InputRole::Data) {
    return addInput(std::move(name), std::move(typeVar), false, false, role);
  }
  OpSpec& optionalInput(std::string name, std::string typeVar, InputRole role = InputRole::Data) {
    return addInput(std::move(name), std::move(typeVar), true, false, role);
  }
  OpSpec& variadicInput(std::string name, std::string typeVar) {
    return addInput(std::move(name), std::move(typeVar), false, true, InputRole::Data);
  }
  // Modifiers of the input declared last.
  OpSpec& weight() {
    inputs.back().weight = true;
    return *this;
  }
  OpSpec& domain(ValueDomain d) {
    inputs.back().domain = d;
    return *this;
  }
  OpSpec& sampleValues(ValueSampler f) {
    inputs.back().values = std::move(f);
    return *this;
  }
  OpSpec& sampleShape(ShapeSampler f) {
    inputs.back().shape = std::move(f);
    return *this;
  }
  OpSpec& safe(SafeRange r) {
    inputs.back().safe = r;
    return *this;
  }
  // The input holds indices (ValueDomain::Indices) that `fix` makes valid.
  OpSpec& indices(IndexFix fix = {}) {
    inputs.back().domain = ValueDomain::Indices;
    inputs.back().fixIndices = std::move(fix);
    return *this;
  }
  OpSpec& heterogeneous() {
    inputs.back().heterogeneous = true;
    return *this;
  }
  OpSpec& generatedAlways() {
    inputs.back().alwaysGenerated = true;
    return *this;
  }
  OpSpec& notGenerated() {
    inputs.back().generated = false;
    return *this;
  }
  OpSpec& variadicOutput(std::string name, int maxCount) {
    outputs.push_back(OutputSpec{std::move(name), false, maxCount});
    return *this;
  }
  OpSpec& output(std::string name) {
    outputs.push_back(OutputSpec{std::move(name), false, 1});
    return *this;
  }
  OpSpec& optionalOutput(std::string name) {
    outputs.push_back(OutputSpec{std::move(name), true, 1});
    return *this;
  }
  OpSpec& attr(AttrSpec a) {
    attrs.push_back(std::move(a));
    return *this;
  }
  // The same generic lambda instantiated for concrete and symbolic integers.
  template <class F>
  OpSpec& shapeRule(F f) {
    ruleConcrete = f;
    ruleSymbolic = f;
    return *this;
  }
  OpSpec& valueFromShapes(std::function<Tensor(const Node&, const std::vector<Shape>&)> f) {
    valueFromShapesFn = f;
    kernelFn = [f](KernelCall& k) {
      std::vector<Shape> shapes;
      for (size_t i = 0; i < k.inputCount(); ++i)
        shapes.push_back(k.has(i) ? k.in(i).shape() : Shape{});
      k.out(0) = f(k.node(), shapes);
    };
    return *this;
  }
  OpSpec& kernel(std::function<void(KernelCall&)> k) {
    kernelFn = std::move(k);
    return *this;
  }
  OpSpec& gradient(std::function<void(GradCall&)> g, GradientKind kind = GradientKind::Exact) {
    gradientFn = std::move(g);
    gradientKind = kind;
    return *this;
  }
  OpSpec& stability(std::function<void(StabilityCall&)> f) {
    stabilityFn = std::move(f);
    return *this;
  }
  OpSpec& boundedOutput(double bound) {
    outputBound = bound;
    return *this;
  }
  OpSpec& outputError(std::function<std::vector<double>(KernelCall&)> f) {
    outputErrorFn = std::move(f);
    return *this;
  }
  OpSpec& neverGenerated(std::string why) {
    notGeneratedWhy = std::move(why);
    return *this;
  }
  // Applies a helper that declares several parts at once (quantize.h's scaleAndZeroPoint).
  template <class F>
  OpSpec& with(F&& declare) {
    declare(*this);
    return *this;
  }
  OpSpec& onnxPartialShapes() {
    onnxLeavesDimsUnknown = true;
    return *this;
  }
  OpSpec& tolerance(Tolerance t) {
    float32Tolerance = t;
    return *this;
  }

  // --- queries ---
 private:
  OpSpec& addInput(std::string name, std::string typeVar, bool optional, bool variadic,
                   InputRole role) {
    InputSpec in;
    in.name = std::move(name);
    in.typeVar = std::move(typeVar);
    in.optional = optional;
    in.variadic = variadic;
    in.role = role;
    inputs.push_back(std::move(in));
    return *this;
  }

 public:
  const AttrSpec* attrSpec(std::string_view name) const;
  const TypeVarSpec* typeVar(std::string_view name) const;
  const InputSpec& inputSpec(size_t i) const;  // variadic inputs repeat the last spec
  bool isVariadic() const { return !inputs.empty() && inputs.back().variadic; }
  size_t minInputs() const;
  size_t maxInputs() const;  // SIZE_MAX when variadic
};

// Makes `indices`, input i of `node`, valid for inputs of these shapes (see IndexFix).
void makeIndicesValid(const OpSpec& spec, size_t i, const Node& node,
                      const std::vector<Shape>& inputShapes, Tensor& indices);

// Attribute constructors for specs.
AttrSpec intAttr(std::string name, int64_t def, int64_t lo, int64_t hi);
AttrSpec optionalInt(std::string name, int64_t lo, int64_t hi);  // no default; drawn in [lo, hi]
AttrSpec intChoiceAttr(std::string name, int64_t def, std::vector<int64_t> supported);
AttrSpec floatAttr(std::string name, float def, double lo, double hi);
AttrSpec stringAttr(std::string name, std::string def, std::vector<std::string> supported);
AttrSpec intsAttr(std::string name);                              // optional, no default
AttrSpec symbolicInts(std::string name, int64_t lo, int64_t hi);  // optional, symbolic
AttrSpec symbolicInt(std::string name, int64_t def, int64_t lo, int64_t hi);
AttrSpec requiredInt(std::string name, int64_t lo, int64_t hi);
AttrSpec axisAttr(std::string name, int64_t def);  // sampled as an axis of input 0
AttrSpec spatialInts(std::string name, int perAxis, int64_t lo,
                     int64_t hi);  // symbolic, per spatial axis
AttrSpec withSampling(AttrSpec a, AttrSampling s);

// Dtype sets used by many specs, in ONNX's type-constraint terms.
std::vector<DType> floatTypes();          // float16, float32, float64
std::vector<DType> signedNumericTypes();  // floats, int8, int32, int64
std::vector<DType> numericTypes();        // signed + uint8
std::vector<DType> allComputeTypes();     // numeric + bool
std::vector<DType> indexTypes();          // int32, int64
std::vector<DType> boolTypes();

// The registry: every op, registered explicitly by family (see registry.cpp).
class Registry {
 public:
  static const Registry& instance();
  const OpSpec* find(std::string_view type) const;
  const std::vector<std::unique_ptr<OpSpec>>& all() const { return ops_; }
  OpSpec& add(OpSpec spec);

 private:
  std::vector<std::unique_ptr<OpSpec>> ops_;
};

// Family registration functions, one per file of src/ops/.
void registerElementwiseUnary(Registry& reg);
void registerElementwiseBinary(Registry& reg);
void registerCastClipWhere(Registry& reg);
void registerMatMulGemm(Registry& reg);
void registerConvPool(Registry& reg);
void registerNormalization(Registry& reg);
void registerReductions(Registry& reg);
void registerShapeOps(Registry& reg);
void registerIndexing(Registry& reg);
void registerResize(Registry& reg);
void registerShapeQueriesAndMasks(Registry& reg);
void registerConstants(Registry& reg);
void registerLosses(Registry& reg);
void registerQuantization(Registry& reg);
void registerEinsum(Registry& reg);
void registerRecurrent(Registry& reg);
void registerControlFlow(Registry& reg);

// The tensor a Constant node makes, from whichever value attribute it sets; throws ShapeError
// naming the node when it sets none or several.
Tensor constantValue(const Node& node);

}  // namespace nncheck::ops
