// Elementwise ops: unary math and activations, arithmetic, comparisons, logic, Cast, Clip,
// Where, PRelu. ATen broadcasts as ONNX's multidirectional broadcasting does.
#include "pytorch_source/emit.h"

namespace nncheck::pytorch {
namespace {

bool isFloat(DType t) { return t == DType::Float32 || t == DType::Float64; }

Emitter call(const std::string& fn) {
  return [fn](NodeEmit& e) { e.assign(0, fn + "(" + e.in(0) + ")"); };
}

// A float function of an integer tensor: ONNX keeps the integer type (truncating), ATen returns
// floats.
Emitter callKeepingType(const std::string& fn) {
  return [fn](NodeEmit& e) {
    if (isFloat(e.dtype(0)))
      e.assign(0, fn + "(" + e.in(0) + ")");
    else
      assignAsInteger(e, 0, fn + "(" + e.in(0) + ".to(" + e.torchType(DType::Float64) + "))",
                      e.outDtype(0));
  };
}

Emitter call2(const std::string& fn) {
  return [fn](NodeEmit& e) { e.assign(0, fn + "(" + e.in(0) + ", " + e.in(1) + ")"); };
}

// Max, Min, Sum of any number of inputs, folded left to right.
Emitter fold(const std::string& fn) {
  return [fn](NodeEmit& e) {
    std::string acc = e.in(0);
    for (size_t i = 1; i < e.inputCount(); ++i) acc = fn + "(" + acc + ", " + e.in(i) + ")";
    // One input: ONNX's result is a new tensor equal to it.
    e.assign(0, e.inputCount() == 1 ? acc + ".clone()" : acc);
  };
}

}  // namespace

void addElementwiseEmitters(EmitterTable& t) {
  auto aten = [](std::string op) {
    for (char& c : op) c = static_cast<char>(std::tolower(c));
    return "torch." + op;
  };
  for (const char* op : {"Abs", "Neg", "Relu", "Sign"}) t[op] = call(aten(op));
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Reciprocal", "Sin", "Cos", "Tan",
                         "Asin", "Acos", "Atan", "Floor", "Ceil", "Erf"})
    t[op] = callKeepingType(aten(op));
  t["Round"] = call("torch.round");  // half to even, as ONNX
  t["Not"] = call("torch.logical_not");
  t["LeakyRelu"] = [](NodeEmit& e) {
    e.assign(0, e.functional("leaky_relu") + "(" + e.in(0) + ", " +
                    pyFloat(e.attrFloat("alpha", 0.01f)) + ")");
  };
  // aten::elu(x, alpha, scale, input_scale) is scale * (x > 0 ? x : alpha * (exp(x) - 1)):
  // Elu with scale 1, Selu with ONNX's gamma as the scale.
  t["Elu"] = [](NodeEmit& e) {
    const std::string alpha = pyFloat(e.attrFloat("alpha", 1.0f));
    e.assign(0, e.dialect() == Dialect::Python
                    ? "torch.nn.functional.elu(" + e.in(0) + ", " + alpha + ")"
                    : "torch.elu(" + e.in(0) + ", " + alpha + ", 1.0, 1.0)");
  };
  // Python's functional elu has no scale: selu, as users write it, with ONNX's default
  // constants (PyTorch's, rounded to float), else gamma * elu.
  t["Selu"] = [](NodeEmit& e) {
    constexpr float kAlpha = 1.67326319217681884765625f, kGamma = 1.05070102214813232421875f;
    const float alpha = e.attrFloat("alpha", kAlpha), gamma = e.attrFloat("gamma", kGamma);
    if (e.dialect() == Dialect::TorchScript)
      e.assign(0,
               "torch.elu(" + e.in(0) + ", " + pyFloat(alpha) + ", " + pyFloat(gamma) + ", 1.0)");
    else if (alpha == kAlpha && gamma == kGamma)
      e.assign(0, "torch.nn.functional.selu(" + e.in(0) + ")");
    else
      e.assign(0, "torch.nn.functional.elu(" + e.in(0) + ", " + pyFloat(alpha) + ") * " +
                      pyFloat(gamma));
  };
  // max(0, min(1, alpha x + beta)). With PyTorch's alpha 1/6 and beta 1/2, what its exporter
  // writes for hardsigmoid, the call itself, which freeze's MKLDNN fusions match; ATen's has no
  // other parameters, so others are written out.
  t["HardSigmoid"] = [](NodeEmit& e) {
    const float alpha = e.attrFloat("alpha", 0.2f), beta = e.attrFloat("beta", 0.5f);
    if (alpha == 1.0f / 6 && beta == 0.5f && isFloat(e.dtype(0))) {
      e.assign(0, e.functional("hardsigmoid") + "(" + e.in(0) + ")");
      return;
    }
    e.assign(0, "torch.clamp(" + e.in(0) + " * " + pyFloat(alpha) + " + " + pyFloat(beta) +
                    ", 0.0, 1.0)");
  };
  // x max(0, min(1, x / 6 + 1/2)), PyTorch's hardswish exactly (its exporter writes HardSwish).
  t["HardSwish"] = [](NodeEmit& e) {
    if (!isFloat(e.dtype(0))) e.unsupported("ATen's hardswish takes floats");
    e.assign(0, e.functional("hardswish") + "(" + e.in(0) + ")");
  };
  t["Softplus"] = [](NodeEmit& e) {  // log(exp(x) + 1); ATen returns x past its threshold
    e.assign(0, e.functional("softplus") + "(" + e.in(0) + ", 1.0, 20.0)");
  };

  t["Add"] = call2("torch.add");
  t["Sub"] = call2("torch.sub");
  t["Mul"] = call2("torch.mul");
  t["Div"] = [](NodeEmit& e) {  // integers truncate toward zero
    e.assign(0, isFloat(e.dtype(0))
                    ? "torch.div(" + e.in(0) + ", " + e.in(1) + ")"
                    : "torch.div(" + e.in(0) + ", " + e.in(1) + ", rounding_mode='trunc')");
  };
  t["Mod"] = [](NodeEmit& e) {  // fmod=0: the divisor's sign (Python's %), fmod=1: C's
    e.assign(0, std::string(e.attrInt("fmod", 0) ? "torch.fmod(" : "torch.remainder(") + e.in(0) +
                    ", " + e.in(1) + ")");
  };
  t["Pow"] = [](NodeEmit& e) {  // the result has the base's dtype
    const std::string f64 = e.torchType(DType::Float64);
    if (isFloat(e.dtype(0))) {
      // Float types that differ promote by ATen's rules, under which a 0-d float64 base loses to
      // a float32 exponent: computed in float64, the result takes the base's type.
      e.assign(0, isFloat(e.dtype(1)) && e.dtype(1) != e.dtype(0)
                      ? "torch.pow(" + e.in(0) + ".to(" + f64 + "), " + e.in(1) + ".to(" + f64 +
                            ")).to(" + e.torchType(e.dtype(0)) + ")"
                      : "torch.pow(" + e.in(0) + ", " + e.in(1) + ")");
      return;
    }
    assignAsInteger(e, 0,
                    "torch.pow(" + e.in(0) + ".to(" + f64 + "), " + e.in(1) + ".to(" + f64 + "))",
                    e.outDtype(0));
  };
  t["Max"] = fold("torch.maximum");
  t["Min"] = fold("torch.minimum");
  t["And"] = call2("torch.logical_and");
  t["Or"] = call2("torch.logical_or");
  t["Xor"] = call2("torch.logical_xor");
  t["Equal"] = call2("torch.eq");
  t["Greater"] = call2("torch.gt");
  t["Less"] = call2("torch.lt");
  t["PRelu"] = [](NodeEmit& e) {  // the slope broadcasts to X; ATen's prelu wants [C]
    e.assign(
        0, "torch.where(" + e.in(0) + " < 0, " + e.in(0) + " * " + e.in(1) + ", " + e.in(0) + ")");
  };
  t["Where"] = [](NodeEmit& e) {
    e.assign(0, "torch.where(" + e.in(0) + ", " + e.in(1) + ", " + e.in(2) + ")");
  };
  t["Cast"] = [](NodeEmit& e) { e.assign(0, e.in(0) + ".to(" + e.torchType(e.outDtype(0)) + ")"); };
  // min(max(x, lo), hi), written as user code and PyTorch's exporter have it: a Clip with
  // constant bounds is torch.clamp with number bounds (hi wins when lo > hi, as in ONNX), and
  // [0, 6] on floats is relu6, hardtanh(x, 0, 6), which freeze's MKLDNN fusions match after a
  // conv. Computed bounds are tensors to clamp.
  t["Clip"] = [](NodeEmit& e) {
    if (!e.has(1) && !e.has(2)) {
      e.assign(0, e.in(0) + ".clone()");
      return;
    }
    // ATen's clamp takes numbers or tensors, not one of each.
    const bool numbers = (!e.has(1) || e.constant(1)) && (!e.has(2) || e.constant(2));
    auto bound = [&](size_t i) -> std::string {
      if (!e.has(i)) return "None";
      const Tensor* c = e.constant(i);
      if (!numbers) return e.in(i);
      if (!isFloat(e.dtype(0))) return std::to_string(c->toInt64s().at(0));
      return pyFloat(c->toDouble(0));
    };
    const std::string lo = bound(1), hi = bound(2);
    if (isFloat(e.dtype(0)) && lo == "0.0" && hi == "6.0") {
      e.assign(0, e.functional("hardtanh") + "(" + e.in(0) + ", 0.0, 6.0)");
      return;
    }
    e.assign(0, "torch.clamp(" + e.in(0) + ", " + lo + ", " + hi + ")");
  };
}

}  // namespace nncheck::pytorch
