// Elementwise ops: unary math and activations, arithmetic, comparisons, logic, Cast, Clip,
// Where, PRelu. jax.numpy broadcasts as ONNX's multidirectional broadcasting does, and ONNX's
// operands share one dtype, so no promotion happens; Python number literals are weakly typed in
// JAX and take the tensor's dtype.
#include "jax_source/emit.h"

namespace nncheck::jax {
namespace {

Emitter call(const std::string& fn) {
  return [fn](JaxEmit& e) { e.assign(0, fn + "(" + e.in(0) + ")"); };
}

// A float function: ONNX defines these ops on float types only, but lets some take integers in
// older opsets; those are left to engines that keep the integer type.
Emitter callOnFloats(const std::string& fn) {
  return [fn](JaxEmit& e) {
    if (!e.isFloat(0)) e.unsupported("a float function of " + e.dtypeName(e.dtype(0)));
    e.assign(0, fn + "(" + e.in(0) + ")");
  };
}

Emitter call2(const std::string& fn) {
  return [fn](JaxEmit& e) { e.assign(0, fn + "(" + e.in(0) + ", " + e.in(1) + ")"); };
}

Emitter infix(const std::string& op) {
  return [op](JaxEmit& e) { e.assign(0, e.in(0) + " " + op + " " + e.in(1)); };
}

// Max, Min, Sum of any number of inputs, folded left to right.
Emitter fold(const std::string& fn) {
  return [fn](JaxEmit& e) {
    std::string acc = e.in(0);
    for (size_t i = 1; i < e.inputCount(); ++i) acc = fn + "(" + acc + ", " + e.in(i) + ")";
    // One input: ONNX's result equals it; JAX arrays are immutable, so it is the value itself.
    e.assign(0, acc);
  };
}

}  // namespace

void addElementwiseEmitters(EmitterTable& t) {
  t["Abs"] = call("jnp.abs");
  t["Neg"] = call("jnp.negative");
  t["Sign"] = call("jnp.sign");
  t["Relu"] = call("jax.nn.relu");
  t["Not"] = call("jnp.logical_not");
  t["Round"] = call("jnp.round");  // half to even, as ONNX
  t["Identity"] = [](JaxEmit& e) { e.assign(0, e.in(0)); };
  const std::pair<const char*, const char*> floatFunctions[] = {{"Sigmoid", "jax.nn.sigmoid"},
                                                                {"Tanh", "jnp.tanh"},
                                                                {"Exp", "jnp.exp"},
                                                                {"Log", "jnp.log"},
                                                                {"Sqrt", "jnp.sqrt"},
                                                                {"Reciprocal", "jnp.reciprocal"},
                                                                {"Sin", "jnp.sin"},
                                                                {"Cos", "jnp.cos"},
                                                                {"Tan", "jnp.tan"},
                                                                {"Asin", "jnp.arcsin"},
                                                                {"Acos", "jnp.arccos"},
                                                                {"Atan", "jnp.arctan"},
                                                                {"Sinh", "jnp.sinh"},
                                                                {"Cosh", "jnp.cosh"},
                                                                {"Asinh", "jnp.arcsinh"},
                                                                {"Acosh", "jnp.arccosh"},
                                                                {"Atanh", "jnp.arctanh"},
                                                                {"Floor", "jnp.floor"},
                                                                {"Ceil", "jnp.ceil"},
                                                                {"Erf", "jax.scipy.special.erf"},
                                                                {"Softsign", "jax.nn.soft_sign"},
                                                                {"HardSwish", "jax.nn.hard_swish"},
                                                                {"Softplus", "jax.nn.softplus"},
                                                                {"IsNaN", "jnp.isnan"}};
  for (const auto& [op, fn] : floatFunctions) t[op] = callOnFloats(fn);
  t["IsInf"] = [](JaxEmit& e) {
    const bool pos = e.attrInt("detect_positive", 1) != 0,
               neg = e.attrInt("detect_negative", 1) != 0;
    const std::string x = e.in(0);
    e.assign(0, pos && neg ? "jnp.isinf(" + x + ")"
                : pos      ? "jnp.isposinf(" + x + ")"
                : neg      ? "jnp.isneginf(" + x + ")"
                           : "jnp.zeros(" + x + ".shape, jnp.bool_)");
  };
  t["LeakyRelu"] = [](JaxEmit& e) {
    e.assign(0, "jax.nn.leaky_relu(" + e.in(0) + ", " + pyFloat(e.attrFloat("alpha", 0.01f)) + ")");
  };
  t["Celu"] = [](JaxEmit& e) {
    if (!e.isFloat(0)) e.unsupported("Celu of " + e.dtypeName(e.dtype(0)));
    e.assign(0, "jax.nn.celu(" + e.in(0) + ", " + pyFloat(e.attrFloat("alpha", 1.0f)) + ")");
  };
  // Inference (training_mode absent or false): the input, and a mask of ones.
  t["Dropout"] = [](JaxEmit& e) {
    if (e.has(2)) {
      const Tensor* training = e.constant(2);
      if (!training) e.unsupported("training_mode is computed, not an initializer");
      if (training->toDouble(0) != 0) e.unsupported("training_mode=1");
    }
    e.assign(0, e.in(0));
    if (e.outUsed(1)) e.assign(1, "jnp.ones(" + e.in(0) + ".shape, jnp.bool_)");
  };
  t["Elu"] = [](JaxEmit& e) {
    e.assign(0, "jax.nn.elu(" + e.in(0) + ", " + pyFloat(e.attrFloat("alpha", 1.0f)) + ")");
  };
  // jax.nn.selu with ONNX's default constants (JAX's, rounded to float), else gamma * elu.
  t["Selu"] = [](JaxEmit& e) {
    constexpr float kAlpha = 1.67326319217681884765625f, kGamma = 1.05070102214813232421875f;
    const float alpha = e.attrFloat("alpha", kAlpha), gamma = e.attrFloat("gamma", kGamma);
    if (alpha == kAlpha && gamma == kGamma)
      e.assign(0, "jax.nn.selu(" + e.in(0) + ")");
    else
      e.assign(0, pyFloat(gamma) + " * jax.nn.elu(" + e.in(0) + ", " + pyFloat(alpha) + ")");
  };
  // max(0, min(1, alpha x + beta)): jax.nn.hard_sigmoid is relu6(x + 3) / 6, ONNX's with alpha 1/6
  // and beta 1/2; others are written out.
  t["HardSigmoid"] = [](JaxEmit& e) {
    if (!e.isFloat(0)) e.unsupported("HardSigmoid of " + e.dtypeName(e.dtype(0)));
    const float alpha = e.attrFloat("alpha", 0.2f), beta = e.attrFloat("beta", 0.5f);
    if (alpha == 1.0f / 6 && beta == 0.5f)
      e.assign(0, "jax.nn.hard_sigmoid(" + e.in(0) + ")");
    else
      e.assign(0, "jnp.clip(" + e.in(0) + " * " + pyFloat(alpha) + " + " + pyFloat(beta) +
                      ", 0.0, 1.0)");
  };
  t["ThresholdedRelu"] = [](JaxEmit& e) {
    if (!e.isFloat(0)) e.unsupported("ThresholdedRelu of " + e.dtypeName(e.dtype(0)));
    const std::string x = e.in(0);
    e.assign(0,
             "jnp.where(" + x + " > " + pyFloat(e.attrFloat("alpha", 1.0f)) + ", " + x + ", 0.0)");
  };
  t["Shrink"] = [](JaxEmit& e) {
    if (!e.isFloat(0)) e.unsupported("Shrink of " + e.dtypeName(e.dtype(0)));
    const std::string x = e.in(0), l = pyFloat(e.attrFloat("lambd", 0.5f)),
                      b = pyFloat(e.attrFloat("bias", 0.0f));
    e.assign(0, "jnp.where(" + x + " < -" + l + ", " + x + " + " + b + ", jnp.where(" + x + " > " +
                    l + ", " + x + " - " + b + ", 0.0))");
  };

  t["Add"] = infix("+");
  t["Sub"] = infix("-");
  t["Mul"] = infix("*");
  t["Div"] = [](JaxEmit& e) {  // integers truncate toward zero: lax.div, not numpy's floor
    if (e.isFloat(0))
      e.assign(0, e.in(0) + " / " + e.in(1));
    else
      e.assign(0, "lax.div(*jnp.broadcast_arrays(" + e.in(0) + ", " + e.in(1) + "))");
  };
  t["Mod"] = [](JaxEmit& e) {  // fmod=0: the divisor's sign (Python's %), fmod=1: C's
    e.assign(0, std::string(e.attrInt("fmod", 0) ? "jnp.fmod(" : "jnp.remainder(") + e.in(0) +
                    ", " + e.in(1) + ")");
  };
  t["Pow"] = [](JaxEmit& e) {  // the result has the base's dtype
    if (e.isFloat(0)) {
      e.assign(
          0, "jnp.power(" + e.in(0) + ", " + e.in(1) + ".astype(" + e.dtypeName(e.dtype(0)) + "))");
      return;
    }
    assignAsInteger(
        e, 0, "jnp.power(" + e.in(0) + ".astype(jnp.float64), " + e.in(1) + ".astype(jnp.float64))",
        e.outDtype(0));
  };
  t["Max"] = fold("jnp.maximum");
  t["Min"] = fold("jnp.minimum");
  t["Sum"] = fold("jnp.add");
  t["Mean"] = [](JaxEmit& e) {
    if (!e.isFloat(0)) e.unsupported("Mean of " + e.dtypeName(e.dtype(0)));
    std::string acc = e.in(0);
    for (size_t i = 1; i < e.inputCount(); ++i) acc = "jnp.add(" + acc + ", " + e.in(i) + ")";
    e.assign(0, acc + " / " + std::to_string(e.inputCount()) + ".0");
  };
  t["And"] = call2("jnp.logical_and");
  t["Or"] = call2("jnp.logical_or");
  t["Xor"] = call2("jnp.logical_xor");
  t["Equal"] = infix("==");
  t["Greater"] = infix(">");
  t["Less"] = infix("<");
  t["GreaterOrEqual"] = infix(">=");
  t["LessOrEqual"] = infix("<=");
  t["PRelu"] = [](JaxEmit& e) {  // the slope broadcasts to X
    const std::string x = e.in(0);
    e.assign(0, "jnp.where(" + x + " < 0, " + x + " * " + e.in(1) + ", " + x + ")");
  };
  t["Where"] = [](JaxEmit& e) {
    e.assign(0, "jnp.where(" + e.in(0) + ", " + e.in(1) + ", " + e.in(2) + ")");
  };
  t["Cast"] = [](JaxEmit& e) {
    e.assign(0, e.in(0) + ".astype(" + e.dtypeName(e.outDtype(0)) + ")");
  };
  t["CastLike"] = [](JaxEmit& e) {
    e.assign(0, e.in(0) + ".astype(" + e.dtypeName(e.dtype(1)) + ")");
  };
  // min(max(x, lo), hi) as jnp.clip (hi wins when lo > hi, as in ONNX); [0, 6] on floats is
  // jax.nn.relu6, as Flax models write it.
  t["Clip"] = [](JaxEmit& e) {
    if (!e.has(1) && !e.has(2)) {
      e.assign(0, e.in(0));
      return;
    }
    auto bound = [&](size_t i) -> std::string {
      if (!e.has(i)) return "None";
      const Tensor* c = e.constant(i);
      if (!c) return e.in(i);
      return e.isFloat(0) ? pyFloat(c->toDouble(0)) : std::to_string(c->toInt64s().at(0));
    };
    const std::string lo = bound(1), hi = bound(2);
    if (e.isFloat(0) && lo == "0.0" && hi == "6.0") {
      e.assign(0, "jax.nn.relu6(" + e.in(0) + ")");
      return;
    }
    e.assign(0, "jnp.clip(" + e.in(0) + ", " + lo + ", " + hi + ")");
  };
}

}  // namespace nncheck::jax
