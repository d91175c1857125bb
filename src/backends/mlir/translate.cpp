#include "mlir/translate.h"

#include <algorithm>
#include <set>

#include "mlir/emit.h"
#include "nncheck/error.h"
#include "ops/kernels.h"

namespace nncheck::mlir {
namespace {

std::string dims(const Shape& shape) {
  std::string s;
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s;
}

std::string typeList(const std::vector<Value>& vs) {
  std::string s;
  for (size_t i = 0; i < vs.size(); ++i)
    s += (i ? ", " : "") + tensorType(vs[i].dtype, vs[i].shape);
  return s;
}

std::string hexBytes(const std::vector<uint8_t>& bytes) {
  static const char* kDigits = "0123456789ABCDEF";
  std::string s = "0x";
  for (uint8_t b : bytes) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

// A bool tensor's elements from `at` on, nested by dimension as MLIR's literal wants
// ("[[true, false], [false, true]]").
std::string boolLiteral(const Tensor& t, size_t axis, int64_t at) {
  if (axis == t.shape().size()) return t.bytes()[static_cast<size_t>(at)] ? "true" : "false";
  int64_t stride = 1;
  for (size_t a = axis + 1; a < t.shape().size(); ++a) stride *= t.shape()[a];
  std::string s = "[";
  for (int64_t i = 0; i < t.shape()[axis]; ++i)
    s += (i ? ", " : "") + boolLiteral(t, axis + 1, at + i * stride);
  return s + "]";
}

// One element of type t holding v, converted as nncheck's kernels convert.
Tensor scalarTensor(DType t, double v) {
  switch (t) {
    case DType::Float32:
      return Tensor::scalar<float>(ops::fromDouble<float>(v));
    case DType::Float64:
      return Tensor::scalar<double>(v);
    case DType::Int32:
      return Tensor::scalar<int32_t>(ops::fromDouble<int32_t>(v));
    case DType::Int64:
      return Tensor::scalar<int64_t>(ops::fromDouble<int64_t>(v));
    case DType::Bool:
      return Tensor::scalar<bool>(v != 0);
    default:
      throw Unsupported("dtype", "mlir: no constants of " + std::string(dtypeName(t)));
  }
}

}  // namespace

std::string elementType(DType t) {
  switch (t) {
    case DType::Float32:
      return "f32";
    case DType::Float64:
      return "f64";
    case DType::Int32:
      return "i32";
    case DType::Int64:
      return "i64";
    case DType::Bool:
      return "i1";
    default:
      throw Unsupported("dtype", "mlir: dtype " + std::string(dtypeName(t)) + " is not translated");
  }
}

std::string tensorType(DType t, const Shape& shape) {
  return "tensor<" + dims(shape) + elementType(t) + ">";
}

std::string i64Array(const std::vector<int64_t>& v) {
  std::string s = "array<i64";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : ": ") + std::to_string(v[i]);
  return s + ">";
}

bool isFloat(DType t) { return t == DType::Float32 || t == DType::Float64; }
bool isInteger(DType t) { return t == DType::Int32 || t == DType::Int64; }

Shape broadcastShape(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t k = out.size() - 1 - i;
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[k] = da == 1 ? db : da;
  }
  return out;
}

// --- Body ---

Value Body::op(const std::string& name, const std::vector<Value>& operands, DType dtype,
               const Shape& shape, const std::string& props) {
  Value out{"%" + std::to_string(next_++), dtype, shape};
  std::string line = out.ssa + " = \"" + name + "\"(";
  for (size_t i = 0; i < operands.size(); ++i) line += (i ? ", " : "") + operands[i].ssa;
  line += ")";
  if (!props.empty()) line += " <{" + props + "}>";
  line += " : (" + typeList(operands) + ") -> " + tensorType(dtype, shape);
  lines_.push_back(std::move(line));
  return out;
}

Value Body::constant(const Tensor& t) {
  std::string data;
  if (t.dtype() == DType::Bool)
    data = t.size() == 1 ? (t.bytes()[0] ? "true" : "false") : boolLiteral(t, 0, 0);
  else
    data = "\"" + hexBytes(t.bytes()) + "\"";
  const std::string type = tensorType(t.dtype(), t.shape());
  return op("tosa.const", {}, t.dtype(), t.shape(), "value = dense<" + data + "> : " + type);
}

Value Body::splat(DType t, double v, const Shape& shape) {
  Tensor one = scalarTensor(t, v);
  Tensor full(t, shape);
  const size_t width = one.bytes().size();
  for (int64_t i = 0; i < full.size(); ++i)
    std::copy(one.bytes().begin(), one.bytes().end(), full.bytes().begin() + i * width);
  return constant(full);
}

Value Body::reshape(const Value& v, const Shape& shape) {
  if (v.shape == shape) return v;
  return op("tosa.reshape", {v}, v.dtype, shape, "new_shape = " + i64Array(shape));
}

Value Body::toRank(const Value& v, size_t rank) {
  if (v.rank() >= rank) return v;
  Shape s(rank - v.rank(), 1);
  s.insert(s.end(), v.shape.begin(), v.shape.end());
  return reshape(v, s);
}

Value Body::broadcastTo(const Value& v, const Shape& shape) {
  const Value r = toRank(v, shape.size());
  if (r.shape == shape) return r;
  std::vector<int64_t> multiples(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) multiples[i] = r.shape[i] == shape[i] ? 1 : shape[i];
  return op("tosa.tile", {r}, v.dtype, shape, "multiples = " + i64Array(multiples));
}

Value Body::transpose(const Value& v, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  if (identity) return v;
  Shape shape;
  std::vector<int32_t> p32;
  for (int64_t p : perm) {
    shape.push_back(v.shape.at(static_cast<size_t>(p)));
    p32.push_back(static_cast<int32_t>(p));
  }
  const Value perms = constant(Tensor::fromVector<int32_t>({int64_t(perm.size())}, p32));
  return op("tosa.transpose", {v, perms}, v.dtype, shape);
}

Value Body::pad(const Value& v, const std::vector<int64_t>& pads, const Value* fill) {
  const size_t r = v.rank();
  std::vector<int64_t> rows;
  Shape shape = v.shape;
  bool any = false;
  for (size_t a = 0; a < r; ++a) {
    rows.push_back(pads[a]);
    rows.push_back(pads[a + r]);
    shape[a] += pads[a] + pads[a + r];
    any = any || pads[a] || pads[a + r];
  }
  if (!any) return v;
  std::vector<Value> operands{v, constant(Tensor::fromVector<int64_t>({int64_t(r), 2}, rows))};
  if (fill) operands.push_back(*fill);
  return op("tosa.pad", operands, v.dtype, shape);
}

Value Body::slice(const Value& v, const Shape& start, const Shape& size) {
  if (size == v.shape) return v;
  return op("tosa.slice", {v}, v.dtype, size,
            "size = " + i64Array(size) + ", start = " + i64Array(start));
}

Value Body::sliceAxis(const Value& v, int64_t axis, int64_t from, int64_t n) {
  Shape start(v.rank(), 0), size = v.shape;
  start[static_cast<size_t>(axis)] = from;
  size[static_cast<size_t>(axis)] = n;
  return slice(v, start, size);
}

Value Body::reduce(const std::string& name, Value v, const std::vector<int64_t>& axes) {
  for (int64_t a : axes) {
    Shape s = v.shape;
    s[static_cast<size_t>(a)] = 1;
    v = op(name, {v}, v.dtype, s, "axis = " + std::to_string(a) + " : i32");
  }
  return v;
}

Value Body::cast(const Value& v, DType t) {
  if (v.dtype == t) return v;
  return op("tosa.cast", {v}, t, v.shape);
}

// --- NodeEmit ---

NodeEmit::NodeEmit(const Node& node, int64_t opset, std::vector<Value> in,
                   std::vector<ops::InputFacts> facts, std::vector<ops::InputFacts> outs,
                   std::vector<bool> wanted, Body& body, std::vector<Value>& results)
    : NodeReading(node, opset, std::move(facts), std::move(outs), "mlir"),
      in_(std::move(in)),
      wanted_(std::move(wanted)),
      body_(body),
      results_(results) {}

const Value& NodeEmit::in(size_t i) const {
  if (!has(i)) unsupported("input " + std::to_string(i) + " is absent");
  return in_[i];
}

void NodeEmit::assign(size_t k, const Value& v) {
  if (v.dtype != outDtype(k) || v.shape != outShape(k))
    throw Error("mlir: " + node().opType + " node '" + node().name + "': output " +
                std::to_string(k) + " was emitted as " + tensorType(v.dtype, v.shape) +
                ", the rules infer " + tensorType(outDtype(k), outShape(k)));
  results_.at(k) = v;
}

void NodeEmit::requireTypes(const std::vector<DType>& allowed) const {
  for (size_t i = 0; i < in_.size(); ++i)
    if (has(i) && std::find(allowed.begin(), allowed.end(), in_[i].dtype) == allowed.end())
      unsupported("input " + std::to_string(i) + " is " + std::string(dtypeName(in_[i].dtype)) +
                  ", which the TOSA emission does not take");
}

Value NodeEmit::unary(const std::string& op, const Value& x) {
  return body_.op(op, {x}, x.dtype, x.shape);
}

Value NodeEmit::binary(const std::string& op, const Value& a, const Value& b, DType out) {
  const size_t r = std::max(a.rank(), b.rank());
  return body_.op(op, {body_.toRank(a, r), body_.toRank(b, r)}, out,
                  broadcastShape(a.shape, b.shape), op == "tosa.mul" ? "shift = 0 : i8" : "");
}

Value NodeEmit::pointwise(const std::string& op, const std::vector<Value>& operands, DType out) {
  Shape shape;
  for (const Value& v : operands) shape = broadcastShape(shape, v.shape);
  std::vector<Value> full;
  for (const Value& v : operands) full.push_back(body_.broadcastTo(v, shape));
  return body_.op(op, full, out, shape);
}

Value NodeEmit::splatLike(double v, const Value& like) { return splat(like.dtype, v, like.rank()); }

Value NodeEmit::splat(DType t, double v, size_t rank) { return body_.splat(t, v, Shape(rank, 1)); }

const EmitterTable& emitters() {
  static const EmitterTable table = [] {
    EmitterTable t;
    addElementwiseEmitters(t);
    addNeuralEmitters(t);
    addShapeEmitters(t);
    return t;
  }();
  return table;
}

// --- the function ---

Program translate(const Model& model) {
  const Graph& g = model.graph;
  const std::map<std::string, ops::InputFacts> facts = ops::inferStaticModel(model, "mlir");
  auto checkShape = [](const std::string& name, const Shape& shape) {
    for (int64_t d : shape)
      if (d == 0)
        throw Unsupported("mlir", "mlir: value '" + name + "' is empty (" + dims(shape) +
                                      "), and TOSA's lowering is not tested on empty tensors");
  };
  Program p;
  Body body;
  std::map<std::string, Value> values;  // ONNX value -> SSA value
  std::string params;
  for (const ValueInfo* in : g.feedInputs()) {
    const ops::InputFacts& f = facts.at(in->name);
    checkShape(in->name, f.shape);
    const Value v{"%a" + std::to_string(p.inputs.size()), f.dtype, f.shape};
    params += (p.inputs.empty() ? "" : ", ") + v.ssa + ": " + tensorType(v.dtype, v.shape);
    values[in->name] = v;
    p.inputs.push_back({in->name, f.dtype, f.shape});
  }
  for (const Initializer& w : g.initializers)
    if (!values.count(w.name)) {  // a graph input's default: the input wins
      checkShape(w.name, w.value.shape());
      values[w.name] = body.constant(w.value);
    }
  std::set<std::string> used;  // values a node reads or the graph returns
  for (const Node& n : g.nodes) used.insert(n.inputs.begin(), n.inputs.end());
  for (const ValueInfo& o : g.outputs) used.insert(o.name);
  forEachNodeToTranslate(
      g, facts, emitters(), "mlir",
      [&](const Node& n, const Emitter& emitter, const std::vector<ops::InputFacts>& inFacts,
          const std::vector<ops::InputFacts>& outFacts) {
        std::vector<Value> in;
        for (const std::string& v : n.inputs) in.push_back(v.empty() ? Value{} : values.at(v));
        std::vector<bool> wanted;
        for (size_t k = 0; k < n.outputs.size(); ++k) {
          wanted.push_back(!n.outputs[k].empty() && used.count(n.outputs[k]));
          if (wanted.back()) checkShape(n.outputs[k], outFacts[k].shape);
        }
        std::vector<Value> results(n.outputs.size());
        NodeEmit emit(n, model.defaultOpset(), in, inFacts, outFacts, wanted, body, results);
        emitter(emit);
        for (size_t k = 0; k < n.outputs.size(); ++k) {
          if (!wanted[k]) continue;
          if (results[k].ssa.empty())
            throw Error("mlir: " + n.opType + " node '" + n.name + "': output " +
                        std::to_string(k) + " was not emitted");
          values[n.outputs[k]] = results[k];
        }
      });
  std::vector<Value> rets;
  std::string retNames;
  for (const ValueInfo& o : g.outputs) {
    const Value& v = values.at(o.name);
    rets.push_back(v);
    retNames += (p.outputs.empty() ? "" : ", ") + v.ssa;
    p.outputs.push_back({o.name, v.dtype, v.shape});
  }
  std::string& t = p.text;
  t = "func.func @forward(" + params + ") -> (" + typeList(rets) +
      ") attributes {llvm.emit_c_interface} {\n";
  for (const std::string& l : body.lines()) t += "  " + l + "\n";
  t += "  return " + retNames + " : " + typeList(rets) + "\n}\n";
  return p;
}

}  // namespace nncheck::mlir
