// Rule<I>: the view an op's shape rule has of one node, generic over the integer type I.
//
// An op writes its input constraints and shape transfer once, as a generic lambda:
//
//   .shapeRule([](auto& r) {
//     r.require(r.dim(0, -1) == r.dim(1, -2), "inner dims agree");
//     r.output(0, {r.dim(0, 0), r.dim(1, 1)});
//   })
//
// With I = int64_t the rule checks a concrete node (validity, interpretation, shrinking) and
// throws ShapeError at the first violated requirement. With I = z3::expr the same text emits
// constraints over solver variables (generation). Ranks, dtypes and structural attributes
// (axis, perm, modes) are concrete in both; dims, shape-operand values and "symbolic"
// integer attributes (kernel sizes, strides, pads, group) are of type I.
#pragma once

#include <z3++.h>

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nncheck/error.h"
#include "nncheck/graph.h"

namespace nncheck::ops {

struct OpSpec;

// A violated shape requirement of a concrete node.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A shape operand (Reshape's shape, Slice's starts) whose value is not known where the rule runs,
// such as a graph input in static inference: engines that compile static shapes do not take it.
class UnknownShapeOperand : public ShapeError {
 public:
  using ShapeError::ShapeError;
};

// The rule cannot hold for these concrete choices (ranks, structural attributes): a generator
// tries other choices; a concrete check reports it like a ShapeError.
class Infeasible : public ShapeError {
 public:
  using ShapeError::ShapeError;
};

// Integer helpers that read the same for int64_t and z3::expr (z3's come by ADL).
inline int64_t ite(bool c, int64_t a, int64_t b) { return c ? a : b; }
inline int64_t imod(int64_t a, int64_t b) { return a % b; }
inline z3::expr imod(const z3::expr& a, const z3::expr& b) { return z3::mod(a, b); }
template <class I>
I imax(const I& a, const I& b) {
  return ite(a >= b, a, b);
}
template <class I>
I imin(const I& a, const I& b) {
  return ite(a <= b, a, b);
}
// Ceiling division for a >= 0, b > 0. (Mixing z3::expr with int64_t directly is ambiguous
// with pointer arithmetic on Z3_ast, so the divisor is lifted explicitly.)
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline z3::expr ceilDiv(const z3::expr& a, const z3::expr& b) { return (a + b - 1) / b; }
inline z3::expr ceilDiv(const z3::expr& a, int64_t b) { return ceilDiv(a, a.ctx().int_val(b)); }

// While one lives on this thread, concrete rules hold a model to Rule::requireDefined as well:
// the generator, its mutations and the shrinker open one, so what they make stays where the spec
// says one thing; a user's model is read without it.
//   ops::DefinedOnly scope;   // for the rest of this block
class DefinedOnly {
 public:
  DefinedOnly() : was_(active()) { active() = true; }
  ~DefinedOnly() { active() = was_; }
  DefinedOnly(const DefinedOnly&) = delete;
  DefinedOnly& operator=(const DefinedOnly&) = delete;
  static bool& active() {
    static thread_local bool on = false;
    return on;
  }

 private:
  bool was_;
};

template <class I>
class Rule {
 public:
  using B = decltype(std::declval<I>() == std::declval<I>());

  struct Input {
    bool present = false;
    DType dtype = DType::Undefined;
    std::vector<I> dims;
    // Contents of shape-operand inputs, by role (see InputRole); unset when unknown.
    std::optional<std::vector<I>> values;
    std::optional<std::vector<int64_t>> axes;
    std::optional<std::vector<double>> floats;
    // Generating: the dims drawn for this input, which z3's variables in `dims` start from.
    std::vector<int64_t> drawn;
  };

  Rule(const OpSpec& spec, const Node& node, std::vector<Input> inputs,
       std::map<std::string, std::vector<I>> symbolicAttrs, z3::context* ctx = nullptr)
      : spec_(spec),
        node_(node),
        inputs_(std::move(inputs)),
        symAttrs_(std::move(symbolicAttrs)),
        ctx_(ctx) {}

  // --- inputs ---
  size_t inputCount() const { return inputs_.size(); }
  bool has(size_t i) const { return i < inputs_.size() && inputs_[i].present; }
  int64_t rank(size_t i) const { return static_cast<int64_t>(input(i).dims.size()); }
  const std::vector<I>& dims(size_t i) const { return input(i).dims; }
  // Dim `axis` of input i; a negative axis counts from the end.
  const I& dim(size_t i, int64_t axis) const {
    return input(i)
        .dims[static_cast<size_t>(normAxis(axis, rank(i), "dim of input " + std::to_string(i)))];
  }
  DType dtype(size_t i) const { return input(i).dtype; }
  // Dim `axis` of input i where it is structural, setting ranks (GatherND's index depth): its
  // concrete value. When generating, the drawn value, which the dim is then held to.
  int64_t structuralDim(size_t i, int64_t axis) {
    if constexpr (std::is_same_v<I, int64_t>) {
      return dim(i, axis);
    } else {
      const auto a = static_cast<size_t>(normAxis(axis, rank(i), "structural dim"));
      check(a < input(i).drawn.size(), "input " + std::to_string(i) + " has drawn dims");
      const int64_t v = input(i).drawn[a];
      require(dim(i, axis) == lit(v),
              "the structural dim of input " + std::to_string(i) + " stays as drawn");
      return v;
    }
  }
  const std::vector<I>& values(size_t i) const { return known(input(i).values, i); }
  const std::vector<int64_t>& axes(size_t i) const { return known(input(i).axes, i); }
  const std::vector<double>& floats(size_t i) const { return known(input(i).floats, i); }

  // --- attributes: structural ones are concrete; defaults come from the op's spec ---
  bool hasAttr(std::string_view name) const;
  int64_t attrInt(std::string_view name) const;
  float attrFloat(std::string_view name) const;
  std::string attrString(std::string_view name) const;
  std::vector<int64_t> attrInts(std::string_view name) const;
  // A symbolic integer attribute (declared `symbolic` in the spec), as I.
  std::vector<I> symInts(std::string_view name) const;
  I symInt(std::string_view name) const { return symInts(name).at(0); }

  // --- constraints and results ---
  I lit(int64_t v) const {
    if constexpr (std::is_same_v<I, int64_t>)
      return v;
    else
      return ctx_->int_val(v);
  }
  B truth(bool v) const {
    if constexpr (std::is_same_v<I, int64_t>)
      return v;
    else
      return ctx_->bool_val(v);
  }
  // A concrete condition on ranks, dtypes or structural attributes. Only a real bool: a
  // z3::expr would convert through its Z3_ast pointer and always pass.
  template <class Bool>
  requires std::same_as<Bool, bool>
  void check(Bool ok, const std::string& what) const {
    if (!ok) throw Infeasible(context() + ": " + what);
  }
  // A condition on dims, values or symbolic attributes.
  void require(const B& cond, const std::string& what) {
    if constexpr (std::is_same_v<I, int64_t>) {
      if (!cond) throw ShapeError(context() + ": requires " + what);
    } else {
      constraints_.push_back(cond);
      reasons_.push_back(what);
    }
  }
  // A condition outside which the spec leaves the result undefined or words it two ways (ONNX's
  // shape inference against its operator text): what generation, mutation and shrinking make
  // keeps it (z3's constraints, and concrete checks inside a DefinedOnly scope), and a model
  // outside it stays valid, read the way ONNX's shape inference reads it.
  void requireDefined(const B& cond, const std::string& what);
  // Normalizes an axis into [0, rank), checking its range.
  int64_t normAxis(int64_t axis, int64_t rank, const std::string& what) const {
    check(axis >= -rank && axis < rank, what + ": axis " + std::to_string(axis) +
                                            " out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
  }
  void output(size_t i, std::vector<I> dims, DType dtype) {
    if (outputs_.size() <= i) outputs_.resize(i + 1);
    outputs_[i] = Output{std::move(dims), dtype};
  }
  void output(size_t i, std::vector<I> dims) { output(i, std::move(dims), dtype(0)); }

  struct Output {
    std::vector<I> dims;
    DType dtype = DType::Undefined;
  };
  const std::vector<std::optional<Output>>& outputs() const { return outputs_; }
  const std::vector<B>& constraints() const { return constraints_; }
  const std::vector<std::string>& reasons() const { return reasons_; }
  const Node& node() const { return node_; }
  const OpSpec& spec() const { return spec_; }

  // "Conv 'c1' (inputs float32[1, 3, 5, 5], float32[2, 3, 3, 3])": names op, node and shapes.
  std::string context() const;

 private:
  const Input& input(size_t i) const {
    if (!has(i)) throw ShapeError(context() + ": input " + std::to_string(i) + " is absent");
    return inputs_[i];
  }
  template <class T>
  const T& known(const std::optional<T>& v, size_t i) const {
    if (!v)
      throw UnknownShapeOperand(context() + ": input " + std::to_string(i) +
                                " is a shape operand whose value is not known (make it an "
                                "initializer)");
    return *v;
  }

  const OpSpec& spec_;
  const Node& node_;
  std::vector<Input> inputs_;
  std::map<std::string, std::vector<I>> symAttrs_;
  z3::context* ctx_;
  std::vector<std::optional<Output>> outputs_;
  std::vector<B> constraints_;
  std::vector<std::string> reasons_;
};

template <class I>
void Rule<I>::requireDefined(const B& cond, const std::string& what) {
  if (std::is_same_v<I, int64_t> && !DefinedOnly::active()) return;
  require(cond, what);
}

// Shape helpers shared by many ops, generic like the rules that use them.

// Multidirectional (numpy) broadcast of several dim lists.
template <class I>
std::vector<I> broadcastShapes(Rule<I>& r, const std::vector<std::vector<I>>& shapes) {
  size_t outRank = 0;
  for (const auto& s : shapes) outRank = std::max(outRank, s.size());
  std::vector<I> out;
  for (size_t k = 0; k < outRank; ++k) {
    std::optional<I> acc;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (k + shapes[i].size() < outRank) continue;
      const I& d = shapes[i][k + shapes[i].size() - outRank];
      if (!acc) {
        acc = d;
        continue;
      }
      r.require(*acc == d || *acc == 1 || d == 1,
                "operand " + std::to_string(i) + " broadcasts at output axis " + std::to_string(k));
      acc = ite(*acc == 1, d, *acc);
    }
    out.push_back(*acc);
  }
  return out;
}

// Multidirectional broadcast of the given inputs' dims.
template <class I>
std::vector<I> broadcastDims(Rule<I>& r, const std::vector<size_t>& inputs) {
  std::vector<std::vector<I>> shapes;
  for (size_t i : inputs) shapes.push_back(r.dims(i));
  return broadcastShapes(r, shapes);
}

// Unidirectional broadcast: input `from` must broadcast to `to`'s dims.
template <class I>
void requireUnidirectional(Rule<I>& r, size_t from, const std::vector<I>& to,
                           const std::string& what) {
  r.check(r.rank(from) <= static_cast<int64_t>(to.size()),
          what + " has higher rank than the shape it broadcasts to");
  int64_t off = static_cast<int64_t>(to.size()) - r.rank(from);
  for (int64_t k = 0; k < r.rank(from); ++k) {
    const I& d = r.dims(from)[static_cast<size_t>(k)];
    r.require(d == 1 || d == to[static_cast<size_t>(k + off)],
              what + " broadcasts to the output at axis " + std::to_string(k + off));
  }
}

// The int64 result of a checked operation on dims or shape values, or past int64 (a malformed
// model's shape) a ShapeError naming it: "the product 4 * 2^62 of dims ... overflows int64".
inline int64_t withinInt64(bool overflowed, int64_t result, const char* what, int64_t a,
                           const char* op, int64_t b) {
  if (overflowed)
    throw ShapeError(std::string("the ") + what + " " + std::to_string(a) + " " + op + " " +
                     std::to_string(b) + " of dims or shape values overflows int64");
  return result;
}

// a * b of dims, shape values or size attributes: exact for z3, checked for int64.
inline int64_t imul(int64_t a, int64_t b) {
  int64_t p = 0;
  const bool overflowed = __builtin_mul_overflow(a, b, &p);  // before p is read
  return withinInt64(overflowed, p, "product", a, "*", b);
}
inline z3::expr imul(const z3::expr& a, const z3::expr& b) { return a * b; }

// a + b of dims and shape values (a Pad's pads), likewise.
inline int64_t iadd(int64_t a, int64_t b) {
  int64_t s = 0;
  const bool overflowed = __builtin_add_overflow(a, b, &s);  // before s is read
  return withinInt64(overflowed, s, "sum", a, "+", b);
}
inline z3::expr iadd(const z3::expr& a, const z3::expr& b) { return a + b; }

template <class I>
I product(const Rule<I>& r, const std::vector<I>& dims, size_t begin = 0,
          size_t end = static_cast<size_t>(-1)) {
  I p = r.lit(1);
  for (size_t k = begin; k < dims.size() && k < end; ++k) p = imul(p, dims[k]);
  return p;
}

}  // namespace nncheck::ops
