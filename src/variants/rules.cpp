// The rewrite table: each rule's precondition, read from nncheck's rules (shapes and dtypes by
// ops::inferModel), what it builds, and why the variant computes what the model does.
#include "variants/rules.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nncheck/error.h"

namespace nncheck::variants {
namespace {

bool arithmetic(DType t) {
  return t == DType::Float16 || t == DType::Float32 || t == DType::Float64 || t == DType::Int32 ||
         t == DType::Int64;
}
bool allPositive(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](int64_t d) { return d > 0; });
}
int64_t intAttr(const Node& n, const char* name, int64_t otherwise) {
  const Attribute* a = n.attribute(name);
  return a ? a->i : otherwise;
}
float floatAttr(const Node& n, const char* name, float otherwise) {
  const Attribute* a = n.attribute(name);
  return a ? a->f : otherwise;
}
std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}
// The one reader of a value that is no graph output, or none.
std::optional<size_t> soleReader(const Site& s, const std::string& value) {
  const std::vector<size_t> readers = s.readers(value);
  if (readers.size() != 1 || s.isGraphOutput(value)) return std::nullopt;
  return readers[0];
}
// The node computing a value, or none (a graph input or initializer).
std::optional<size_t> producerOf(const Site& s, const std::string& value) {
  const auto& nodes = s.model.graph.nodes;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& out : nodes[i].outputs)
      if (out == value) return i;
  return std::nullopt;
}
const Shape* shapeOf(const Site& s, const std::string& value) {
  const ops::InputFacts* f = s.fact(value);
  return f ? &f->shape : nullptr;
}

// --- Identities inserted after a value: the producer's output is renamed, and the new nodes
// compute the value again under its name, so its readers and a graph output stay as they are.

std::vector<std::vector<int64_t>> permutations(const Shape& shape) {
  const int64_t r = static_cast<int64_t>(shape.size());
  std::vector<std::vector<int64_t>> out;
  if (r < 2) return out;
  auto add = [&](std::vector<int64_t> p) {
    if (p != range(r) && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (r >= 3) {  // channels last: NCHW -> NHWC, the layout change around a Conv
    std::vector<int64_t> p = {0};
    for (int64_t i = 2; i < r; ++i) p.push_back(i);
    p.push_back(1);
    add(p);
  }
  std::vector<int64_t> reversed = range(r);
  std::reverse(reversed.begin(), reversed.end());
  add(reversed);
  std::vector<int64_t> swapped = range(r);
  std::swap(swapped[r - 2], swapped[r - 1]);
  add(swapped);
  return out;
}

// Transpose then its inverse: data movement only, value-exact.
int transposePairForms(const Site& s) { return static_cast<int>(permutations(s.shape).size()); }
void transposePair(Edit& e, const Site& s, int64_t form) {
  const std::vector<int64_t> p = permutations(s.shape).at(static_cast<size_t>(form));
  std::vector<int64_t> inverse(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    inverse[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  const std::string t = e.node("Transpose", {e.detach(s)}, {Attribute::ofInts("perm", p)});
  e.node("Transpose", {t}, {Attribute::ofInts("perm", inverse)}, s.at);
  e.insertAfter(s.node);
}

// Reshape to one dim and back: the elements in order, value-exact. (A 0 in a shape operand
// copies a dim, so empty tensors are left alone.)
int reshapeFlatForms(const Site& s) { return s.shape.size() >= 2 && allPositive(s.shape); }
void reshapeFlat(Edit& e, const Site& s, int64_t) {
  const std::string flat = e.node("Reshape", {e.detach(s), e.ints("flat", {-1})});
  e.node("Reshape", {flat, e.ints("shape", s.shape)}, {}, s.at);
  e.insertAfter(s.node);
}

// Split in two along an axis, Concat back: value-exact.
std::vector<int64_t> splittableAxes(const Site& s) {
  std::vector<int64_t> axes;
  for (size_t a = 0; a < s.shape.size(); ++a)
    if (s.shape[a] >= 2) axes.push_back(static_cast<int64_t>(a));
  return axes;
}
int splitConcatForms(const Site& s) {
  return s.opset >= 13 ? static_cast<int>(splittableAxes(s).size()) : 0;
}
void splitConcat(Edit& e, const Site& s, int64_t form) {
  const int64_t axis = splittableAxes(s).at(static_cast<size_t>(form));
  const int64_t k = s.shape[static_cast<size_t>(axis)] / 2;
  const std::string a = e.fresh(s.at + "_part"), b = e.fresh(s.at + "_part");
  e.node("Split", {e.detach(s), e.ints("split", {k, s.shape[static_cast<size_t>(axis)] - k})},
         {Attribute::ofInt("axis", axis)}, std::vector<std::string>{a, b});
  e.node("Concat", {a, b}, {Attribute::ofInt("axis", axis)}, s.at);
  e.insertAfter(s.node);
}

// x * 1 is x in IEEE arithmetic (-0, NaN and infinities included) and in integers.
int mulOneForms(const Site& s) { return arithmetic(s.dtype); }
void mulOne(Edit& e, const Site& s, int64_t) {
  e.node("Mul", {e.detach(s), e.constant("one", scalarOf(s.dtype, 1))}, {}, s.at);
  e.insertAfter(s.node);
}

// x + (-0) is x in IEEE arithmetic, -0 included (x + 0 would turn -0 into +0); x + 0 in
// integers.
int addZeroForms(const Site& s) { return arithmetic(s.dtype); }
void addZero(Edit& e, const Site& s, int64_t) {
  e.node("Add", {e.detach(s), e.constant("zero", scalarOf(s.dtype, -0.0))}, {}, s.at);
  e.insertAfter(s.node);
}

// Identity: the value itself.
int identityForms(const Site&) { return 1; }
void identity(Edit& e, const Site& s, int64_t) {
  e.node("Identity", {e.detach(s)}, {}, s.at);
  e.insertAfter(s.node);
}

// Unsqueeze an axis, Squeeze it again: the shape and data unchanged, value-exact.
int unsqueezeSqueezeForms(const Site& s) {
  return s.opset >= 13 && s.shape.size() <= 5 ? static_cast<int>(s.shape.size()) + 1 : 0;
}
void unsqueezeSqueeze(Edit& e, const Site& s, int64_t form) {
  const std::string u = e.node("Unsqueeze", {e.detach(s), e.ints("axes", {form})});
  e.node("Squeeze", {u, e.ints("axes", {form})}, {}, s.at);
  e.insertAfter(s.node);
}

// Slice of the whole tensor (starts 0, ends the dims): value-exact.
int sliceWholeForms(const Site& s) { return !s.shape.empty() && allPositive(s.shape); }
void sliceWhole(Edit& e, const Site& s, int64_t) {
  const int64_t r = static_cast<int64_t>(s.shape.size());
  e.node("Slice",
         {e.detach(s), e.ints("starts", std::vector<int64_t>(static_cast<size_t>(r), 0)),
          e.ints("ends", s.shape), e.ints("axes", range(r))},
         {}, s.at);
  e.insertAfter(s.node);
}

// Pad by zero elements on every side: value-exact.
int padZeroForms(const Site& s) { return !s.shape.empty() && arithmetic(s.dtype); }
void padZero(Edit& e, const Site& s, int64_t) {
  e.node("Pad", {e.detach(s), e.ints("pads", std::vector<int64_t>(2 * s.shape.size(), 0))}, {},
         s.at);
  e.insertAfter(s.node);
}

// Cast to a type holding every value of the dtype, and back: value-exact.
DType wider(DType t) {
  switch (t) {
    case DType::Float16:
      return DType::Float32;
    case DType::Float32:
      return DType::Float64;
    case DType::Int32:
      return DType::Int64;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:  // 0 and 1, and back: nonzero is true
      return DType::Int32;
    default:
      return DType::Undefined;
  }
}
int castRoundTripForms(const Site& s) {
  return wider(s.dtype) != DType::Undefined && s.allows(wider(s.dtype));
}
void castRoundTrip(Edit& e, const Site& s, int64_t) {
  const std::string w =
      e.node("Cast", {e.detach(s)}, {Attribute::ofInt("to", static_cast<int64_t>(wider(s.dtype)))});
  e.node("Cast", {w}, {Attribute::ofInt("to", static_cast<int64_t>(s.dtype))}, s.at);
  e.insertAfter(s.node);
}

// --- The producer replaced by nodes computing the same value under its name.

// Operands of a commutative op swapped: IEEE addition and multiplication commute exactly, so do
// max, min and the logical ops; broadcasting is symmetric.
int commuteForms(const Site& s) {
  static const std::set<std::string> ops = {"Add", "Mul", "Max", "Min",  "Sum",
                                            "And", "Or",  "Xor", "Equal"};
  const Node& n = s.producer();
  return ops.count(n.opType) && n.inputs.size() == 2 && n.hasInput(0) && n.hasInput(1) &&
         n.inputs[0] != n.inputs[1];
}
void commute(Edit& e, const Site& s, int64_t) {
  Node n = s.producer();
  std::swap(n.inputs[0], n.inputs[1]);
  e.node(n.opType, n.inputs, n.attributes, s.at);
  e.replace(s.node);
}

// a - b as a + (-b): exact in IEEE arithmetic and in two's complement.
int subToAddNegForms(const Site& s) { return s.producer().opType == "Sub" && arithmetic(s.dtype); }
void subToAddNeg(Edit& e, const Site& s, int64_t) {
  const Node& n = s.producer();
  e.node("Add", {n.inputs[0], e.node("Neg", {n.inputs[1]})}, {}, s.at);
  e.replace(s.node);
}

// Relu(x) as Max(x, 0): the same value (a zero's sign aside, which compares equal).
int reluToMaxForms(const Site& s) { return s.producer().opType == "Relu" && isFloatDType(s.dtype); }
void reluToMax(Edit& e, const Site& s, int64_t) {
  e.node("Max", {s.producer().inputs[0], e.constant("zero", scalarOf(s.dtype, 0))}, {}, s.at);
  e.replace(s.node);
}

// MatMul then Add of a bias that broadcasts to the product, as one Gemm: the same sums, perhaps
// rounded in another order (within the rounding allowance).
std::optional<size_t> gemmProduct(const Site& s, int64_t form) {
  const Node& add = s.producer();
  if (add.opType != "Add" || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1] ||
      !isFloatDType(s.dtype) || s.shape.size() != 2)
    return std::nullopt;
  const std::string& product = add.inputs[static_cast<size_t>(form)];
  const std::optional<size_t> m = producerOf(s, product);
  if (!m || s.model.graph.nodes[*m].opType != "MatMul" || soleReader(s, product) != s.node)
    return std::nullopt;
  const Node& mm = s.model.graph.nodes[*m];
  const Shape* a = shapeOf(s, mm.inputs[0]);
  const Shape* b = shapeOf(s, mm.inputs[1]);
  const Shape* c = shapeOf(s, add.inputs[1 - static_cast<size_t>(form)]);
  if (!a || !b || !c || a->size() != 2 || b->size() != 2 || c->size() > 2) return std::nullopt;
  const Shape mn = {(*a)[0], (*b)[1]};
  if (s.shape != mn) return std::nullopt;   // the sum has the product's shape
  for (size_t i = 0; i < c->size(); ++i) {  // C broadcasts to [M, N] (unidirectional)
    const int64_t want = mn[mn.size() - c->size() + i];
    if ((*c)[i] != 1 && (*c)[i] != want) return std::nullopt;
  }
  return m;
}
int matmulAddToGemmForms(const Site& s) { return gemmProduct(s, 0) || gemmProduct(s, 1) ? 2 : 0; }
void matmulAddToGemm(Edit& e, const Site& s, int64_t form) {
  // Form 0 takes the first operand that is such a product, form 1 the last.
  int64_t which = form;
  if (!gemmProduct(s, which)) which = 1 - which;
  const size_t m = *gemmProduct(s, which);
  const Node& mm = s.model.graph.nodes[m];
  const Node& add = s.producer();
  e.node("Gemm", {mm.inputs[0], mm.inputs[1], add.inputs[1 - static_cast<size_t>(which)]}, {},
         s.at);
  e.replace(s.node);
  e.remove(m);
}

// Gemm as MatMul (of the operands transposed as transA and transB say), scaled by alpha, plus
// beta times C: the same sums, perhaps rounded in another order (within the allowance).
int gemmToMatmulAddForms(const Site& s) {
  return s.producer().opType == "Gemm" && isFloatDType(s.dtype);
}
void gemmToMatmulAdd(Edit& e, const Site& s, int64_t) {
  const Node& g = s.producer();
  auto operand = [&](size_t i, const char* trans) {
    return intAttr(g, trans, 0) ? e.node("Transpose", {g.inputs[i]}) : g.inputs[i];
  };
  const float alpha = floatAttr(g, "alpha", 1), beta = floatAttr(g, "beta", 1);
  const bool hasC = g.hasInput(2);
  std::string y = e.node("MatMul", {operand(0, "transA"), operand(1, "transB")}, {},
                         alpha == 1 && !hasC ? s.at : "");
  if (alpha != 1)
    y = e.node("Mul", {y, e.constant("alpha", scalarOf(s.dtype, alpha))}, {}, hasC ? "" : s.at);
  if (hasC) {
    const std::string c =
        beta == 1 ? g.inputs[2]
                  : e.node("Mul", {g.inputs[2], e.constant("beta", scalarOf(s.dtype, beta))});
    e.node("Add", {y, c}, {}, s.at);
  }
  e.replace(s.node);
}

// Softmax as Exp(x - max) / sum: what it is defined as (within the allowance).
int softmaxDecomposedForms(const Site& s) {
  return s.producer().opType == "Softmax" && s.opset >= 13 && isFloatDType(s.dtype) &&
         !s.shape.empty();
}
void softmaxDecomposed(Edit& e, const Site& s, int64_t) {
  const Node& n = s.producer();
  const int64_t r = static_cast<int64_t>(s.shape.size());
  int64_t axis = intAttr(n, "axis", -1);
  if (axis < 0) axis += r;
  const std::string& x = n.inputs[0];
  const std::string max =
      s.opset >= 18
          ? e.node("ReduceMax", {x, e.ints("axes", {axis})}, {Attribute::ofInt("keepdims", 1)})
          : e.node("ReduceMax", {x},
                   {Attribute::ofInts("axes", {axis}), Attribute::ofInt("keepdims", 1)});
  const std::string exp = e.node("Exp", {e.node("Sub", {x, max})});
  const std::string sum =
      e.node("ReduceSum", {exp, e.ints("axes", {axis})}, {Attribute::ofInt("keepdims", 1)});
  e.node("Div", {exp, sum}, {}, s.at);
  e.replace(s.node);
}

// BatchNormalization (inference) of constant parameters as x * a + b, a = scale / sqrt(var +
// epsilon), b = B - mean * a, folded in double: how engines compute it, which the allowance's
// model of normalizations covers.
int batchNormToMulAddForms(const Site& s) {
  const Node& n = s.producer();
  if (n.opType != "BatchNormalization" || n.outputs.size() != 1 || intAttr(n, "training_mode", 0) ||
      !isFloatDType(s.dtype) || s.shape.size() < 2 || n.inputs.size() != 5)
    return 0;
  for (size_t i = 1; i < 5; ++i) {
    const Initializer* w = s.model.graph.initializer(n.inputs[i]);
    if (!w || w->value.dtype() != s.dtype || w->value.rank() != 1) return 0;
  }
  return 1;
}
void batchNormToMulAdd(Edit& e, const Site& s, int64_t) {
  const Node& n = s.producer();
  auto param = [&](size_t i) { return s.model.graph.initializer(n.inputs[i])->value; };
  const Tensor scale = param(1), bias = param(2), mean = param(3), var = param(4);
  const double eps = floatAttr(n, "epsilon", 1e-5f);
  Shape shape = {scale.size()};
  shape.resize(s.shape.size() - 1, 1);  // [C, 1, ..., 1]: broadcasts over the spatial dims
  std::vector<double> a, b;
  for (int64_t c = 0; c < scale.size(); ++c) {
    const double k = scale.toDouble(c) / std::sqrt(var.toDouble(c) + eps);
    a.push_back(k);
    b.push_back(bias.toDouble(c) - mean.toDouble(c) * k);
  }
  const std::string scaled =
      e.node("Mul", {n.inputs[0], e.constant("bn_scale", tensorOf(s.dtype, shape, a))});
  e.node("Add", {scaled, e.constant("bn_shift", tensorOf(s.dtype, shape, b))}, {}, s.at);
  e.replace(s.node);
}

// A Conv of 1x1 kernels (stride 1, no padding, one group) as a MatMul over the channels of the
// input moved last, and back: the same sums (within the allowance).
int conv1x1ToMatmulForms(const Site& s) {
  const Node& n = s.producer();
  if (n.opType != "Conv" || !isFloatDType(s.dtype) || s.shape.size() < 3 || s.shape.size() > 4)
    return 0;
  const Initializer* w = s.model.graph.initializer(n.inputs.size() > 1 ? n.inputs[1] : "");
  if (!w || w->value.rank() != static_cast<int64_t>(s.shape.size())) return 0;
  for (int64_t d = 2; d < w->value.rank(); ++d)
    if (w->value.shape()[static_cast<size_t>(d)] != 1) return 0;
  if (intAttr(n, "group", 1) != 1) return 0;
  if (const Attribute* p = n.attribute("auto_pad"); p && p->s != "NOTSET" && p->s != "VALID")
    return 0;
  if (const Attribute* a = n.attribute("strides"))
    for (int64_t v : a->ints)
      if (v != 1) return 0;
  if (const Attribute* a = n.attribute("pads"))
    for (int64_t v : a->ints)
      if (v != 0) return 0;
  return 1;
}
void conv1x1ToMatmul(Edit& e, const Site& s, int64_t) {
  const Node& n = s.producer();
  const int64_t r = static_cast<int64_t>(s.shape.size());
  std::vector<int64_t> last = {0}, first = {0, r - 1};  // channels last, and back
  for (int64_t i = 2; i < r; ++i) last.push_back(i);
  last.push_back(1);
  for (int64_t i = 1; i < r - 1; ++i) first.push_back(i);
  const Tensor& w = s.model.graph.initializer(n.inputs[1])->value;  // [M, C, 1...]
  const int64_t m = w.shape()[0], c = w.shape()[1];
  std::vector<double> wt(static_cast<size_t>(c * m));  // W as [C, M]: exact in double
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < c; ++j) wt[static_cast<size_t>(j * m + i)] = w.toDouble(i * c + j);
  std::string y =
      e.node("MatMul", {e.node("Transpose", {n.inputs[0]}, {Attribute::ofInts("perm", last)}),
                        e.constant("weight", tensorOf(w.dtype(), {c, m}, wt))});
  if (n.hasInput(2)) y = e.node("Add", {y, n.inputs[2]});
  e.node("Transpose", {y}, {Attribute::ofInts("perm", first)}, s.at);
  e.replace(s.node);
}

// (x + y) + z as x + (y + z) in integers: two's complement addition is associative, overflow
// included; each operand broadcasts to the result, so y + z is defined.
std::optional<size_t> innerSum(const Site& s) {
  const Node& n = s.producer();
  if (n.opType != "Add" || n.inputs.size() != 2 ||
      (s.dtype != DType::Int32 && s.dtype != DType::Int64))
    return std::nullopt;
  const std::optional<size_t> m = producerOf(s, n.inputs[0]);
  if (!m || n.inputs[0] == n.inputs[1] || s.model.graph.nodes[*m].opType != "Add" ||
      soleReader(s, n.inputs[0]) != s.node)
    return std::nullopt;
  return m;
}
int integerReassociationForms(const Site& s) { return innerSum(s).has_value(); }
void integerReassociation(Edit& e, const Site& s, int64_t) {
  const size_t m = *innerSum(s);
  const Node& inner = s.model.graph.nodes[m];
  const std::string yz = e.node("Add", {inner.inputs[1], s.producer().inputs[1]});
  e.node("Add", {inner.inputs[0], yz}, {}, s.at);
  e.replace(s.node);
  e.remove(m);
}

}  // namespace

const std::vector<RuleImpl>& ruleTable() {
  static const std::vector<RuleImpl> table = {
      {{"transpose-pair", "Transpose then its inverse after a value (NCHW->NHWC->NCHW first)"},
       {"Transpose"},
       &transposePairForms,
       &transposePair},
      {{"reshape-flat", "Reshape to one dim and back"},
       {"Reshape"},
       &reshapeFlatForms,
       &reshapeFlat},
      {{"split-concat", "Split in two along an axis, Concat back"},
       {"Split", "Concat"},
       &splitConcatForms,
       &splitConcat},
      {{"mul-one", "x * 1"}, {"Mul"}, &mulOneForms, &mulOne},
      {{"add-zero", "x + (-0)"}, {"Add"}, &addZeroForms, &addZero},
      {{"identity", "Identity(x)"}, {"Identity"}, &identityForms, &identity},
      {{"unsqueeze-squeeze", "Unsqueeze an axis, Squeeze it"},
       {"Unsqueeze", "Squeeze"},
       &unsqueezeSqueezeForms,
       &unsqueezeSqueeze},
      {{"slice-whole", "Slice of the whole tensor"}, {"Slice"}, &sliceWholeForms, &sliceWhole},
      {{"pad-zero", "Pad by zero elements"}, {"Pad"}, &padZeroForms, &padZero},
      {{"cast-round-trip", "Cast to a wider type and back"},
       {"Cast"},
       &castRoundTripForms,
       &castRoundTrip},
      {{"commute", "operands of a commutative op swapped"}, {}, &commuteForms, &commute},
      {{"sub-to-add-neg", "a - b as a + Neg(b)"}, {"Add", "Neg"}, &subToAddNegForms, &subToAddNeg},
      {{"relu-to-max", "Relu(x) as Max(x, 0)"}, {"Max"}, &reluToMaxForms, &reluToMax},
      {{"integer-reassociation", "(x + y) + z as x + (y + z) in integers"},
       {},
       &integerReassociationForms,
       &integerReassociation},
      {{"matmul-add-to-gemm", "MatMul + Add as Gemm", false},
       {"Gemm"},
       &matmulAddToGemmForms,
       &matmulAddToGemm},
      {{"gemm-to-matmul-add", "Gemm as MatMul, Mul and Add", false},
       {"MatMul", "Mul", "Add", "Transpose"},
       &gemmToMatmulAddForms,
       &gemmToMatmulAdd},
      {{"softmax-decomposed", "Softmax as Exp(x - ReduceMax) / ReduceSum", false},
       {"ReduceMax", "Sub", "Exp", "ReduceSum", "Div"},
       &softmaxDecomposedForms,
       &softmaxDecomposed},
      {{"batchnorm-to-mul-add", "BatchNormalization of constants as x * a + b", false},
       {"Mul", "Add"},
       &batchNormToMulAddForms,
       &batchNormToMulAdd},
      {{"conv1x1-to-matmul", "1x1 Conv as Transpose, MatMul, Transpose", false},
       {"Transpose", "MatMul", "Add"},
       &conv1x1ToMatmulForms,
       &conv1x1ToMatmul},
  };
  return table;
}

}  // namespace nncheck::variants
