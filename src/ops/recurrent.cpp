// Recurrent layers: RNN, GRU and LSTM. One driver runs a cell over every direction and batch
// row (both layouts, sequence lengths, initial states, every output); each cell is a forward
// step and its reverse-mode step, so the kernel and the gradient share one statement of the
// math. Gate order and equations are ONNX's: RNN (i), GRU (z, r, h), LSTM (i, o, f, c).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

#include "ops/kernels.h"

namespace nncheck::ops {
namespace {

enum class Cell { Rnn, Gru, Lstm };

int64_t gatesOf(Cell c) { return c == Cell::Rnn ? 1 : c == Cell::Gru ? 3 : 4; }

// f (RNN), f and g (GRU), f, g and h (LSTM): the defaults, per direction.
std::vector<std::string> defaultActivations(Cell c) {
  if (c == Cell::Rnn) return {"Tanh"};
  if (c == Cell::Gru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

// The activation functions ONNX's recurrent ops name. Unset alpha and beta default as the ops
// of the same names do (ScaledTanh has no defaults: it needs both given).
struct ActivationKind {
  const char* name;
  bool takesAlpha, takesBeta;
  std::optional<double> alpha, beta;
};

const std::vector<ActivationKind>& activationKinds() {
  static const std::vector<ActivationKind> kinds = {
      {"Relu", false, false, {}, {}},       {"Tanh", false, false, {}, {}},
      {"Sigmoid", false, false, {}, {}},    {"Affine", true, true, 1.0, 0.0},
      {"LeakyRelu", true, false, 0.01, {}}, {"ThresholdedRelu", true, false, 1.0, {}},
      {"ScaledTanh", true, true, {}, {}},   {"HardSigmoid", true, true, 0.2, 0.5},
      {"Elu", true, false, 1.0, {}},        {"Softsign", false, false, {}, {}},
      {"Softplus", false, false, {}, {}},
  };
  return kinds;
}

// The kinds a generator draws: those whose defaults are ONNX's own and need no alpha list.
const std::vector<std::string>& drawnActivations() {
  static const std::vector<std::string> names = {"Tanh",     "Sigmoid",     "Relu",      "Softsign",
                                                 "Softplus", "HardSigmoid", "LeakyRelu", "Elu"};
  return names;
}

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;

  double at(double x) const {
    if (name == "Relu") return std::max(0.0, x);
    if (name == "Tanh") return std::tanh(x);
    if (name == "Sigmoid") return 1 / (1 + std::exp(-x));
    if (name == "Affine") return alpha * x + beta;
    if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
    if (name == "ThresholdedRelu") return x >= alpha ? x : 0;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
    if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
    if (name == "Softsign") return x / (1 + std::abs(x));
    return x > 30 ? x : std::log1p(std::exp(x));  // Softplus
  }
  double slope(double x) const {
    if (name == "Relu") return x > 0 ? 1 : 0;
    if (name == "Tanh") return 1 - std::tanh(x) * std::tanh(x);
    if (name == "Sigmoid") {
      const double s = 1 / (1 + std::exp(-x));
      return s * (1 - s);
    }
    if (name == "Affine") return alpha;
    if (name == "LeakyRelu") return x >= 0 ? 1 : alpha;
    if (name == "ThresholdedRelu") return x >= alpha ? 1 : 0;
    if (name == "ScaledTanh") return alpha * beta * (1 - std::tanh(beta * x) * std::tanh(beta * x));
    if (name == "HardSigmoid") return alpha * x + beta > 0 && alpha * x + beta < 1 ? alpha : 0;
    if (name == "Elu") return x >= 0 ? 1 : alpha * std::exp(x);
    if (name == "Softsign") return 1 / ((1 + std::abs(x)) * (1 + std::abs(x)));
    return 1 / (1 + std::exp(-x));  // Softplus
  }
};

bool sameName(const std::string& a, const char* b) {
  const std::string_view bv(b);
  return a.size() == bv.size() && std::equal(a.begin(), a.end(), bv.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

int64_t directionsOf(const Node& node) {
  const Attribute* a = node.attribute("direction");
  return a && a->s == "bidirectional" ? 2 : 1;
}

// The node's activations, per direction in order (forward's, then reverse's), with alpha and
// beta consumed in list order by the functions that take them. Throws ShapeError naming the
// node when the list is malformed.
std::vector<Activation> activationsOf(const Node& node, Cell cell) {
  const int64_t dirs = directionsOf(node);
  const std::vector<std::string> defaults = defaultActivations(cell);
  std::vector<std::string> names;
  if (const Attribute* a = node.attribute("activations")) {
    names = a->strings;
  } else {
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  const std::string where = node.opType + " '" + node.name + "'";
  if (static_cast<int64_t>(names.size()) != dirs * static_cast<int64_t>(defaults.size()))
    throw ShapeError(where + ": activations lists " + std::to_string(names.size()) +
                     " functions; it needs " + std::to_string(defaults.size()) +
                     " per direction, " + std::to_string(dirs) + " direction(s)");
  const Attribute* alphas = node.attribute("activation_alpha");
  const Attribute* betas = node.attribute("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  auto take = [&](const Attribute* list, size_t& next, std::optional<double> def,
                  const std::string& fn, const char* what) {
    if (list && next < list->floats.size()) return static_cast<double>(list->floats[next++]);
    if (!def)
      throw Unsupported("attribute",
                        where + ": activation " + fn + " needs " + what + ", which has no default");
    return *def;
  };
  std::vector<Activation> out;
  for (const std::string& n : names) {
    auto kind = std::find_if(activationKinds().begin(), activationKinds().end(),
                             [&](const ActivationKind& k) { return sameName(n, k.name); });
    if (kind == activationKinds().end())
      throw ShapeError(where + ": '" + n + "' is not an activation ONNX defines");
    Activation act{kind->name};
    if (kind->takesAlpha) act.alpha = take(alphas, nextAlpha, kind->alpha, n, "activation_alpha");
    if (kind->takesBeta) act.beta = take(betas, nextBeta, kind->beta, n, "activation_beta");
    out.push_back(act);
  }
  return out;
}

// One recurrent node with its inputs read as doubles, and where each element lives.
struct Recurrent {
  Cell cell;
  int64_t seq = 0, batch = 0, in = 0, hid = 0, dirs = 1, G = 1;
  bool batchMajor = false, reverseOnly = false, linearBeforeReset = false, inputForget = false;
  std::optional<double> clip;
  std::vector<Activation> acts;
  std::vector<double> X, W, R, B, P, h0, c0;
  std::vector<int64_t> lens;

  Recurrent(const KernelCall& k, Cell c) : cell(c), G(gatesOf(c)) {
    const Node& node = k.node();
    const Shape& xs = k.in(0).shape();
    batchMajor = k.attrInt("layout") == 1;
    seq = batchMajor ? xs[1] : xs[0];
    batch = batchMajor ? xs[0] : xs[1];
    in = xs[2];
    hid = k.attrInt("hidden_size");
    dirs = directionsOf(node);
    reverseOnly = k.attrString("direction") == "reverse";
    if (c == Cell::Gru) linearBeforeReset = k.attrInt("linear_before_reset") != 0;
    if (c == Cell::Lstm) inputForget = k.attrInt("input_forget") != 0;
    if (k.hasAttr("clip")) clip = k.attrFloat("clip");
    acts = activationsOf(node, c);
    X = toDoubles(k.in(0));
    W = toDoubles(k.in(1));
    R = toDoubles(k.in(2));
    B = k.has(3) ? toDoubles(k.in(3))
                 : std::vector<double>(static_cast<size_t>(dirs * 2 * G * hid));
    const size_t states = static_cast<size_t>(dirs * batch * hid);
    h0 = k.has(5) ? toDoubles(k.in(5)) : std::vector<double>(states);
    if (c == Cell::Lstm) {
      c0 = k.has(6) ? toDoubles(k.in(6)) : std::vector<double>(states);
      P = k.has(7) ? toDoubles(k.in(7)) : std::vector<double>(static_cast<size_t>(dirs * 3 * hid));
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = k.has(4) ? k.in(4).toInt64(b) : seq;
      const std::string where = node.opType + " '" + node.name + "': sequence_lens[" +
                                std::to_string(b) + "] = " + std::to_string(len);
      if (len == 0) throw Unsupported("attribute", where + ": empty sequences are not computed");
      if (len < 0 || len > seq)
        throw Error(where + " is outside [1, " + std::to_string(seq) + "], the sequence length");
      lens.push_back(len);
    }
  }

  size_t x(int64_t t, int64_t b, int64_t i) const {
    return static_cast<size_t>((batchMajor ? b * seq + t : t * batch + b) * in + i);
  }
  size_t y(int64_t t, int64_t d, int64_t b, int64_t j) const {
    return static_cast<size_t>(
        (batchMajor ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hid + j);
  }
  size_t state(int64_t d, int64_t b, int64_t j) const {
    return static_cast<size_t>((batchMajor ? b * dirs + d : d * batch + b) * hid + j);
  }
  size_t w(int64_t d, int64_t row, int64_t i) const {
    return static_cast<size_t>((d * G * hid + row) * in + i);
  }
  size_t r(int64_t d, int64_t row, int64_t j) const {
    return static_cast<size_t>((d * G * hid + row) * hid + j);
  }
  size_t wb(int64_t d, int64_t row) const { return static_cast<size_t>(d * 2 * G * hid + row); }
  size_t rb(int64_t d, int64_t row) const { return wb(d, row) + static_cast<size_t>(G * hid); }
  // Peepholes (i, o, f): gate 0, 1 or 2.
  size_t p(int64_t d, int64_t gate, int64_t j) const {
    return static_cast<size_t>(d * 3 * hid + gate * hid + j);
  }
  const Activation& act(int64_t d, size_t n) const {
    return acts[static_cast<size_t>(d) * acts.size() / static_cast<size_t>(dirs) + n];
  }
  double clipped(double v) const { return clip ? std::clamp(v, -*clip, *clip) : v; }
  double clipSlope(double v) const { return clip && std::abs(v) > *clip ? 0 : 1; }
  // f(clip(v)) and its slope in v.
  double apply(int64_t d, size_t n, double v) const { return act(d, n).at(clipped(v)); }
  double applySlope(int64_t d, size_t n, double v) const {
    return act(d, n).slope(clipped(v)) * clipSlope(v);
  }
  bool reversed(int64_t d) const { return reverseOnly || d == 1; }

  // W x_t + Wb, and R h + Rb, for one row (gate * hid + j) of direction d.
  double fromInput(int64_t d, int64_t row, int64_t t, int64_t b) const {
    double s = B[wb(d, row)];
    for (int64_t i = 0; i < in; ++i) s += W[w(d, row, i)] * X[x(t, b, i)];
    return s;
  }
  double fromHidden(int64_t d, int64_t row, const std::vector<double>& h) const {
    double s = B[rb(d, row)];
    for (int64_t j = 0; j < hid; ++j) s += R[r(d, row, j)] * h[static_cast<size_t>(j)];
    return s;
  }
};

// Where the gradient goes: null for inputs that take none.
struct RecurrentGrads {
  std::vector<double>*X, *W, *R, *B, *P, *h0, *c0;

  // Reverse of fromInput and fromHidden for one row, given dL/d(row's sum).
  void input(const Recurrent& m, int64_t d, int64_t row, int64_t t, int64_t b, double da) const {
    if (B) (*B)[m.wb(d, row)] += da;
    for (int64_t i = 0; i < m.in; ++i) {
      if (W) (*W)[m.w(d, row, i)] += da * m.X[m.x(t, b, i)];
      if (X) (*X)[m.x(t, b, i)] += da * m.W[m.w(d, row, i)];
    }
  }
  void hidden(const Recurrent& m, int64_t d, int64_t row, const std::vector<double>& h,
              std::vector<double>& dh, double da) const {
    if (B) (*B)[m.rb(d, row)] += da;
    for (int64_t j = 0; j < m.hid; ++j) {
      if (R) (*R)[m.r(d, row, j)] += da * h[static_cast<size_t>(j)];
      dh[static_cast<size_t>(j)] += da * m.R[m.r(d, row, j)];
    }
  }
};

// One time step of one direction and batch row: the states before and after, each gate's
// activation input (before clipping) and output, and what a cell keeps besides (GRU: r * h or
// R h + Rb; LSTM: the cell state).
struct Step {
  int64_t t = 0;
  std::vector<double> hPrev, cPrev, raw, gate, kept, h, c;
};

Step forwardStep(const Recurrent& m, int64_t d, int64_t b, int64_t t, const std::vector<double>& hp,
                 const std::vector<double>& cp) {
  const int64_t H = m.hid;
  const auto u = [](int64_t v) { return static_cast<size_t>(v); };
  Step s{t,
         hp,
         cp,
         std::vector<double>(u(m.G * H)),
         std::vector<double>(u(m.G * H)),
         {},
         std::vector<double>(u(H)),
         cp};
  auto gate = [&](int64_t row, size_t fn, double v) {
    s.raw[u(row)] = v;
    s.gate[u(row)] = m.apply(d, fn, v);
    return s.gate[u(row)];
  };
  switch (m.cell) {
    case Cell::Rnn:
      for (int64_t j = 0; j < H; ++j)
        s.h[u(j)] = gate(j, 0, m.fromInput(d, j, t, b) + m.fromHidden(d, j, hp));
      break;
    case Cell::Gru: {
      for (int64_t row = 0; row < 2 * H; ++row)
        gate(row, 0, m.fromInput(d, row, t, b) + m.fromHidden(d, row, hp));
      s.kept.resize(u(H));
      if (!m.linearBeforeReset)
        for (int64_t j = 0; j < H; ++j) s.kept[u(j)] = s.gate[u(H + j)] * hp[u(j)];
      for (int64_t j = 0; j < H; ++j) {
        const int64_t row = 2 * H + j;
        double v = m.fromInput(d, row, t, b);
        if (m.linearBeforeReset) {
          s.kept[u(j)] = m.fromHidden(d, row, hp);
          v += s.gate[u(H + j)] * s.kept[u(j)];
        } else {
          v += m.fromHidden(d, row, s.kept);
        }
        const double z = s.gate[u(j)];
        s.h[u(j)] = (1 - z) * gate(row, 1, v) + z * hp[u(j)];
      }
      break;
    }
    case Cell::Lstm:
      s.kept.resize(u(H));
      for (int64_t j = 0; j < H; ++j) {
        const double i = gate(
            j, 0, m.fromInput(d, j, t, b) + m.fromHidden(d, j, hp) + m.P[m.p(d, 0, j)] * cp[u(j)]);
        const int64_t fRow = 2 * H + j;
        double f = 1 - i;
        if (m.inputForget)
          s.gate[u(fRow)] = f;
        else
          f = gate(fRow, 0,
                   m.fromInput(d, fRow, t, b) + m.fromHidden(d, fRow, hp) +
                       m.P[m.p(d, 2, j)] * cp[u(j)]);
        const int64_t cRow = 3 * H + j;
        const double cand = gate(cRow, 1, m.fromInput(d, cRow, t, b) + m.fromHidden(d, cRow, hp));
        const double C = f * cp[u(j)] + i * cand;
        s.kept[u(j)] = s.c[u(j)] = C;
        const int64_t oRow = H + j;
        const double o =
            gate(oRow, 0,
                 m.fromInput(d, oRow, t, b) + m.fromHidden(d, oRow, hp) + m.P[m.p(d, 1, j)] * C);
        s.h[u(j)] = o * m.apply(d, 2, C);
      }
      break;
  }
  return s;
}

// Reverse of forwardStep: from dL/dh and dL/dc after the step (dc: LSTM only), adds to the
// gradients and returns dL/dh and dL/dc before it.
std::pair<std::vector<double>, std::vector<double>> backwardStep(const Recurrent& m,
                                                                 const RecurrentGrads& g, int64_t d,
                                                                 int64_t b, const Step& s,
                                                                 const std::vector<double>& dh,
                                                                 std::vector<double> dc) {
  const int64_t H = m.hid;
  const auto u = [](int64_t v) { return static_cast<size_t>(v); };
  std::vector<double> dhp(u(H)), dcp(u(H));
  // dL/d(gate's raw input), given dL/d(gate's output); then through fromInput and fromHidden.
  auto back = [&](int64_t row, size_t fn, double dOut) {
    const double da = dOut * m.applySlope(d, fn, s.raw[u(row)]);
    g.input(m, d, row, s.t, b, da);
    g.hidden(m, d, row, s.hPrev, dhp, da);
    return da;
  };
  switch (m.cell) {
    case Cell::Rnn:
      for (int64_t j = 0; j < H; ++j) back(j, 0, dh[u(j)]);
      break;
    case Cell::Gru: {
      std::vector<double> dr(u(H)), dKept(u(H));
      for (int64_t j = 0; j < H; ++j) {
        const int64_t row = 2 * H + j;
        const double z = s.gate[u(j)];
        dhp[u(j)] += dh[u(j)] * z;
        const double da = dh[u(j)] * (1 - z) * m.applySlope(d, 1, s.raw[u(row)]);
        g.input(m, d, row, s.t, b, da);
        if (m.linearBeforeReset) {
          dr[u(j)] += da * s.kept[u(j)];
          g.hidden(m, d, row, s.hPrev, dhp, da * s.gate[u(H + j)]);
        } else {
          g.hidden(m, d, row, s.kept, dKept, da);
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        if (!m.linearBeforeReset) {
          dr[u(j)] += dKept[u(j)] * s.hPrev[u(j)];
          dhp[u(j)] += dKept[u(j)] * s.gate[u(H + j)];
        }
        back(j, 0, dh[u(j)] * (s.hPrev[u(j)] - s.gate[u(2 * H + j)]));
        back(H + j, 0, dr[u(j)]);
      }
      break;
    }
    case Cell::Lstm:
      for (int64_t j = 0; j < H; ++j) {
        const double C = s.kept[u(j)], cp = s.cPrev[u(j)];
        const double i = s.gate[u(j)], o = s.gate[u(H + j)], f = s.gate[u(2 * H + j)],
                     cand = s.gate[u(3 * H + j)];
        double dC = dc[u(j)] + dh[u(j)] * o * m.applySlope(d, 2, C);
        const double dao = back(H + j, 0, dh[u(j)] * m.apply(d, 2, C));
        if (g.P) (*g.P)[m.p(d, 1, j)] += dao * C;
        dC += dao * m.P[m.p(d, 1, j)];
        dcp[u(j)] += dC * f;
        back(3 * H + j, 1, dC * i);
        double di = dC * cand;
        if (m.inputForget) {
          di -= dC * cp;
        } else {
          const double daf = back(2 * H + j, 0, dC * cp);
          if (g.P) (*g.P)[m.p(d, 2, j)] += daf * cp;
          dcp[u(j)] += daf * m.P[m.p(d, 2, j)];
        }
        const double dai = back(j, 0, di);
        if (g.P) (*g.P)[m.p(d, 0, j)] += dai * cp;
        dcp[u(j)] += dai * m.P[m.p(d, 0, j)];
      }
      break;
  }
  return {std::move(dhp), std::move(dcp)};
}

// Every step of direction d over batch row b, in the order they run.
std::vector<Step> runSequence(const Recurrent& m, int64_t d, int64_t b) {
  std::vector<double> h(static_cast<size_t>(m.hid)), c(static_cast<size_t>(m.hid));
  for (int64_t j = 0; j < m.hid; ++j) {
    h[static_cast<size_t>(j)] = m.h0[m.state(d, b, j)];
    if (m.cell == Cell::Lstm) c[static_cast<size_t>(j)] = m.c0[m.state(d, b, j)];
  }
  const int64_t len = m.lens[static_cast<size_t>(b)];
  std::vector<Step> steps;
  for (int64_t n = 0; n < len; ++n) {
    pollDeadline(m.G * m.hid * (m.in + m.hid));
    steps.push_back(forwardStep(m, d, b, m.reversed(d) ? len - 1 - n : n, h, c));
    h = steps.back().h;
    c = steps.back().c;
  }
  return steps;
}

void recurrentKernel(KernelCall& k, Cell cell) {
  const Recurrent m(k, cell);
  std::vector<double> Y(static_cast<size_t>(m.seq * m.dirs * m.batch * m.hid));  // 0 past a length
  std::vector<double> Yh(static_cast<size_t>(m.dirs * m.batch * m.hid)), Yc(Yh.size());
  for (int64_t d = 0; d < m.dirs; ++d)
    for (int64_t b = 0; b < m.batch; ++b) {
      const std::vector<Step> steps = runSequence(m, d, b);
      for (const Step& s : steps)
        for (int64_t j = 0; j < m.hid; ++j) Y[m.y(s.t, d, b, j)] = s.h[static_cast<size_t>(j)];
      for (int64_t j = 0; j < m.hid; ++j) {
        Yh[m.state(d, b, j)] = steps.back().h[static_cast<size_t>(j)];
        Yc[m.state(d, b, j)] = steps.back().c[static_cast<size_t>(j)];
      }
    }
  const std::vector<double>* outs[] = {&Y, &Yh, &Yc};
  for (size_t o = 0; o < k.outputCount(); ++o) assignDoubles(k.out(o), *outs[o]);
}

// Backpropagation through time, per direction and batch row.
void recurrentGradient(GradCall& g, Cell cell) {
  const Recurrent m(g.kernel(), cell);
  const bool lstm = cell == Cell::Lstm;
  const RecurrentGrads grads{g.dIn(0),
                             g.dIn(1),
                             g.dIn(2),
                             g.dIn(3),
                             lstm ? g.dIn(7) : nullptr,
                             g.dIn(5),
                             lstm ? g.dIn(6) : nullptr};
  const std::vector<double>* dY = g.dOut(0);
  const std::vector<double>* dYh = g.dOut(1);
  const std::vector<double>* dYc = lstm ? g.dOut(2) : nullptr;
  for (int64_t d = 0; d < m.dirs; ++d)
    for (int64_t b = 0; b < m.batch; ++b) {
      const std::vector<Step> steps = runSequence(m, d, b);
      std::vector<double> dh(static_cast<size_t>(m.hid)), dc(dh.size());
      for (int64_t j = 0; j < m.hid; ++j) {
        if (dYh) dh[static_cast<size_t>(j)] = (*dYh)[m.state(d, b, j)];
        if (dYc) dc[static_cast<size_t>(j)] = (*dYc)[m.state(d, b, j)];
      }
      for (auto s = steps.rbegin(); s != steps.rend(); ++s) {
        if (dY)
          for (int64_t j = 0; j < m.hid; ++j)
            dh[static_cast<size_t>(j)] += (*dY)[m.y(s->t, d, b, j)];
        std::tie(dh, dc) = backwardStep(m, grads, d, b, *s, dh, std::move(dc));
      }
      for (int64_t j = 0; j < m.hid; ++j) {
        if (grads.h0) (*grads.h0)[m.state(d, b, j)] += dh[static_cast<size_t>(j)];
        if (grads.c0) (*grads.c0)[m.state(d, b, j)] += dc[static_cast<size_t>(j)];
      }
    }
}

// Sequence lengths within [1, seq_length].
void fixLengths(const Node& node, const std::vector<Shape>& shapes, Tensor& lens) {
  const Attribute* layout = node.attribute("layout");
  const Shape& x = shapes.at(0);
  const int64_t seq = x.size() == 3 ? x[layout && layout->i == 1 ? 1 : 0] : 1;
  for (int64_t e = 0; e < lens.size(); ++e) {
    const int64_t v = lens.span<int32_t>()[static_cast<size_t>(e)];
    lens.span<int32_t>()[static_cast<size_t>(e)] =
        static_cast<int32_t>(1 + ((v % seq) + seq) % seq);
  }
}

int64_t attrIntOr(const Node& node, const char* name, int64_t def) {
  const Attribute* a = node.attribute(name);
  return a ? a->i : def;
}

// The shape of a (num_directions, batch, hidden) state, in the node's layout.
Shape stateShape(SampleContext& c) {
  const bool batchMajor = attrIntOr(c.node, "layout", 0) == 1;
  const int64_t batch = c.dim(0, batchMajor ? 0 : 1);
  const int64_t h = attrIntOr(c.node, "hidden_size", 1), dirs = directionsOf(c.node);
  return batchMajor ? Shape{batch, dirs, h} : Shape{dirs, batch, h};
}

OpSpec recurrentOp(std::string type, Cell cell) {
  const int64_t G = gatesOf(cell);
  const size_t perDirection = defaultActivations(cell).size();
  AttrSpec activations;
  activations.name = "activations";
  activations.kind = Attribute::Kind::Strings;
  activations.sampling = AttrSampling::Custom;
  // Set in about a third of nodes (the generator sets it 60% of the time, this half of those):
  // engines that take only the default functions (OpenCV's LSTM) still see many nodes.
  activations.draw = [perDirection](Rng& rng, const Node& node) -> std::optional<Attribute> {
    if (rng.chance(0.5)) return std::nullopt;
    Attribute a;
    a.kind = Attribute::Kind::Strings;
    for (size_t n = 0; n < perDirection * static_cast<size_t>(directionsOf(node)); ++n)
      a.strings.push_back(rng.pick(drawnActivations()));
    return a;
  };
  AttrSpec alphas, betas;
  alphas.name = "activation_alpha";
  betas.name = "activation_beta";
  alphas.kind = betas.kind = Attribute::Kind::Floats;
  alphas.sampling = betas.sampling = AttrSampling::Never;  // see drawnActivations
  AttrSpec clip = floatAttr("clip", 0, 0.5, 4);
  clip.defaultValue.reset();
  AttrSpec hidden = requiredInt("hidden_size", 1, 6);
  hidden.symbolic = true;

  OpSpec spec(std::move(type), 7);
  spec.tolerance({1e-3, 1e-4})
      .types("T", floatTypes())
      .types("T1", {DType::Int32})
      .input("X", "T")
      .input("W", "T")
      .weight()
      .sampleShape([G](SampleContext& c) {
        return Shape{directionsOf(c.node), G * attrIntOr(c.node, "hidden_size", 1), c.dim(0, 2)};
      })
      .input("R", "T")
      .weight()
      .sampleShape([G](SampleContext& c) {
        const int64_t h = attrIntOr(c.node, "hidden_size", 1);
        return Shape{directionsOf(c.node), G * h, h};
      })
      .optionalInput("B", "T")
      .weight()
      .sampleShape([G](SampleContext& c) {
        return Shape{directionsOf(c.node), 2 * G * attrIntOr(c.node, "hidden_size", 1)};
      })
      .optionalInput("sequence_lens", "T1")
      .indices(fixLengths)
      .sampleShape([](SampleContext& c) {
        return Shape{c.dim(0, attrIntOr(c.node, "layout", 0) == 1 ? 0 : 1)};
      })
      .optionalInput("initial_h", "T")
      .sampleShape(stateShape);
  if (cell == Cell::Lstm)
    spec.optionalInput("initial_c", "T")
        .sampleShape(stateShape)
        .optionalInput("P", "T")
        .weight()
        .sampleShape([](SampleContext& c) {
          return Shape{directionsOf(c.node), 3 * attrIntOr(c.node, "hidden_size", 1)};
        });
  spec.optionalOutput("Y").optionalOutput("Y_h");
  if (cell == Cell::Lstm) spec.optionalOutput("Y_c");
  spec.attr(stringAttr("direction", "forward", {"forward", "reverse", "bidirectional"}))
      .attr(std::move(activations))
      .attr(std::move(alphas))
      .attr(std::move(betas))
      .attr(std::move(clip))
      .attr(std::move(hidden))
      .attr(intChoiceAttr("layout", 0, {0, 1}));
  if (cell == Cell::Gru) spec.attr(intChoiceAttr("linear_before_reset", 0, {0, 1}));
  if (cell == Cell::Lstm) spec.attr(intChoiceAttr("input_forget", 0, {0, 1}));
  spec.shapeRule([cell, G](auto& r) {
    using I = std::decay_t<decltype(r.dim(0, 0))>;
    r.check(r.rank(0) == 3, "X is (seq_length, batch_size, input_size), in the node's layout");
    const bool batchMajor = r.attrInt("layout") == 1;
    const int64_t dirs = directionsOf(r.node());
    try {
      activationsOf(r.node(), cell);
    } catch (const ShapeError& e) {
      r.check(false, e.what());
    }
    const I seq = r.dim(0, batchMajor ? 1 : 0), batch = r.dim(0, batchMajor ? 0 : 1);
    const I h = r.symInt("hidden_size");
    r.require(h >= r.lit(1), "hidden_size is positive");
    auto expect = [&](size_t i, const char* name, std::vector<I> dims) {
      if (!r.has(i)) return;
      r.check(r.rank(i) == static_cast<int64_t>(dims.size()),
              std::string(name) + " has rank " + std::to_string(dims.size()));
      for (size_t a = 0; a < dims.size(); ++a)
        r.require(r.dim(i, static_cast<int64_t>(a)) == dims[a],
                  std::string(name) + "'s axis " + std::to_string(a) + " fits X and hidden_size");
    };
    expect(1, "W", {r.lit(dirs), imul(r.lit(G), h), r.dim(0, 2)});
    expect(2, "R", {r.lit(dirs), imul(r.lit(G), h), h});
    expect(3, "B", {r.lit(dirs), imul(r.lit(2 * G), h)});
    expect(4, "sequence_lens", {batch});
    const std::vector<I> state =
        batchMajor ? std::vector<I>{batch, r.lit(dirs), h} : std::vector<I>{r.lit(dirs), batch, h};
    expect(5, "initial_h", state);
    if (cell == Cell::Lstm) {
      expect(6, "initial_c", state);
      expect(7, "P", {r.lit(dirs), imul(r.lit(3), h)});
    }
    r.output(0, batchMajor ? std::vector<I>{batch, seq, r.lit(dirs), h}
                           : std::vector<I>{seq, r.lit(dirs), batch, h});
    r.output(1, state);
    if (cell == Cell::Lstm) r.output(2, state);
  });
  spec.kernel([cell](KernelCall& k) { recurrentKernel(k, cell); }).gradient([cell](GradCall& g) {
    recurrentGradient(g, cell);
  });
  return spec;
}

}  // namespace

void registerRecurrent(Registry& reg) {
  reg.add(recurrentOp("RNN", Cell::Rnn));
  reg.add(recurrentOp("GRU", Cell::Gru));
  reg.add(recurrentOp("LSTM", Cell::Lstm));
}

}  // namespace nncheck::ops
