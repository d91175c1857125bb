// RNN, GRU and LSTM beyond ONNX 1.12's twelve node tests (which use default activations, one
// direction, no clip and no sequence lengths shorter than the sequence): the equations on scalar
// cases worked by hand, directions, layouts and sequence lengths as structural properties, and
// backpropagation through time against finite differences over every option.
#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.h"
#include "interp/gradients.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

Tensor scalars(const Shape& shape, std::vector<double> v) {
  return Tensor::fromVector<double>(shape, v);
}

Tensor randomTensor(Rng& rng, const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(elementCount(shape)));
  for (double& x : v) x = rng.real(-1, 1);
  return Tensor::fromVector<double>(shape, v);
}

double at(const Tensor& t, int64_t i) { return t.toDouble(i); }

// Inputs listed in `absent` are omitted (named "").
Node recurrentNode(const std::string& op, size_t inputs, size_t outputs,
                   std::vector<Attribute> attrs, std::vector<size_t> absent = {}) {
  static const std::vector<std::string> in = {"X",        "W",         "R",         "B",
                                              "seq_lens", "initial_h", "initial_c", "P"};
  static const std::vector<std::string> out = {"Y", "Y_h", "Y_c"};
  Node n = Node::make(op, std::vector<std::string>(in.begin(), in.begin() + inputs),
                      std::vector<std::string>(out.begin(), out.begin() + outputs), "rec");
  for (size_t i : absent) n.inputs[i].clear();
  n.attributes = std::move(attrs);
  return n;
}

TEST(Recurrent, RnnStepsThroughTimeWithBothBiases) {
  // h1 = tanh(0.5 * 1 + 0.3), h2 = tanh(0.5 * 2 + 0.25 * h1 + 0.3); B = Wb 0.1 + Rb 0.2.
  const Node n = recurrentNode("RNN", 4, 2, {Attribute::ofInt("hidden_size", 1)});
  const auto y = runReferenceNode(n, {scalars({2, 1, 1}, {1, 2}), scalars({1, 1, 1}, {0.5}),
                                      scalars({1, 1, 1}, {0.25}), scalars({1, 2}, {0.1, 0.2})});
  const double h1 = std::tanh(0.8), h2 = std::tanh(1.3 + 0.25 * h1);
  EXPECT_NEAR(at(y[0], 0), h1, 1e-12);
  EXPECT_NEAR(at(y[0], 1), h2, 1e-12);
  EXPECT_NEAR(at(y[1], 0), h2, 1e-12);
}

TEST(Recurrent, GruLinearBeforeResetAppliesTheResetAfterTheRecurrence) {
  // One step, hidden 1, from h0 = 0.5. Gates z, r, h: W = (0.1, 0.2, 0.3), R = (0.4, 0.5, 0.6),
  // Rb for h = 0.7; x = 1.
  const double x = 1, h0 = 0.5;
  const double z = 1 / (1 + std::exp(-(0.1 * x + 0.4 * h0)));
  const double r = 1 / (1 + std::exp(-(0.2 * x + 0.5 * h0)));
  const double resetFirst = std::tanh(0.3 * x + 0.6 * (r * h0) + 0.7);
  const double resetAfter = std::tanh(0.3 * x + r * (0.6 * h0 + 0.7));
  for (int lbr : {0, 1}) {
    const Node n = recurrentNode(
        "GRU", 6, 2,
        {Attribute::ofInt("hidden_size", 1), Attribute::ofInt("linear_before_reset", lbr)}, {4});
    const auto y = runReferenceNode(
        n, {scalars({1, 1, 1}, {x}), scalars({1, 3, 1}, {0.1, 0.2, 0.3}),
            scalars({1, 3, 1}, {0.4, 0.5, 0.6}), scalars({1, 6}, {0, 0, 0, 0, 0, 0.7}), Tensor(),
            scalars({1, 1, 1}, {h0})});
    const double hh = lbr ? resetAfter : resetFirst;
    EXPECT_NEAR(at(y[1], 0), (1 - z) * hh + z * h0, 1e-12) << "linear_before_reset " << lbr;
  }
}

TEST(Recurrent, LstmPeepholesReadTheOldCellForInputAndForgetAndTheNewOneForOutput) {
  // One step, hidden 1, x = 1, h0 = 0, c0 = 2; gates i, o, f, c with W = (0.1, 0.2, 0.3, 0.4) and
  // peepholes i, o, f = (0.5, 0.6, 0.7). With input_forget, f = 1 - i.
  const double c0 = 2;
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  const double i = sig(0.1 + 0.5 * c0), cand = std::tanh(0.4);
  for (int coupled : {0, 1}) {
    const double f = coupled ? 1 - i : sig(0.3 + 0.7 * c0);
    const double c = f * c0 + i * cand;
    const double o = sig(0.2 + 0.6 * c);
    const Node n = recurrentNode(
        "LSTM", 8, 3,
        {Attribute::ofInt("hidden_size", 1), Attribute::ofInt("input_forget", coupled)}, {3, 4});
    const auto y = runReferenceNode(
        n, {scalars({1, 1, 1}, {1}), scalars({1, 4, 1}, {0.1, 0.2, 0.3, 0.4}),
            scalars({1, 4, 1}, {0, 0, 0, 0}), Tensor(), Tensor(), scalars({1, 1, 1}, {0}),
            scalars({1, 1, 1}, {c0}), scalars({1, 3}, {0.5, 0.6, 0.7})});
    EXPECT_NEAR(at(y[2], 0), c, 1e-12) << "input_forget " << coupled;
    EXPECT_NEAR(at(y[1], 0), o * std::tanh(c), 1e-12) << "input_forget " << coupled;
  }
}

TEST(Recurrent, ClipBoundsEveryActivationInputAndAlphasGoToTheFunctionsThatTakeThem) {
  // RNN with f = LeakyRelu(alpha 0.1), clip 1: x W = -3 clips to -1, then -0.1. HardSigmoid takes
  // the next alpha and beta pair, but there is none left: its defaults 0.2, 0.5 apply.
  Node n = recurrentNode("RNN", 3, 1,
                         {Attribute::ofInt("hidden_size", 1), Attribute::ofFloat("clip", 1),
                          Attribute::ofString("direction", "bidirectional"),
                          Attribute::ofFloats("activation_alpha", {0.1f})});
  Attribute acts;
  acts.name = "activations";
  acts.kind = Attribute::Kind::Strings;
  acts.strings = {"LeakyRelu", "HardSigmoid"};
  n.attributes.push_back(acts);
  const auto y = runReferenceNode(
      n, {scalars({1, 1, 1}, {1}), scalars({2, 1, 1}, {-3, 0.25}), scalars({2, 1, 1}, {0, 0})});
  EXPECT_NEAR(at(y[0], 0), static_cast<double>(0.1f) * -1, 1e-9);
  EXPECT_NEAR(at(y[0], 1), 0.2 * 0.25 + 0.5, 1e-9);
}

// The rest of the properties run on random float64 inputs of these sizes.
constexpr int64_t kSeq = 3, kBatch = 2, kIn = 2, kHidden = 2;

int64_t gates(const std::string& op) { return op == "RNN" ? 1 : op == "GRU" ? 3 : 4; }

// Inputs X, W, R, B, sequence_lens, initial_h (and initial_c, P) for `dirs` directions, time major.
std::vector<Tensor> randomInputs(const std::string& op, int64_t dirs, Rng& rng) {
  const int64_t G = gates(op);
  std::vector<Tensor> in = {
      randomTensor(rng, {kSeq, kBatch, kIn}),           randomTensor(rng, {dirs, G * kHidden, kIn}),
      randomTensor(rng, {dirs, G * kHidden, kHidden}),  randomTensor(rng, {dirs, 2 * G * kHidden}),
      Tensor::fromVector<int32_t>({kBatch}, {kSeq, 2}), randomTensor(rng, {dirs, kBatch, kHidden})};
  if (op == "LSTM") {
    in.push_back(randomTensor(rng, {dirs, kBatch, kHidden}));
    in.push_back(randomTensor(rng, {dirs, 3 * kHidden}));
  }
  return in;
}

// Direction d's slice of a tensor whose axis 0 is the direction (W, R, B, P, states).
Tensor direction(const Tensor& t, int64_t d) {
  Shape s = t.shape();
  const int64_t n = elementCount(s) / s[0];
  s[0] = 1;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(t.toDouble(d * n + i));
  return Tensor::fromVector<double>(s, v);
}

TEST(Recurrent, BidirectionalIsAForwardAndAReverseRunSideBySide) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    Rng rng(1);
    const std::vector<Tensor> in = randomInputs(op, 2, rng);
    const size_t outs = op == "LSTM" ? 3 : 2;
    auto run = [&](const char* dir, std::vector<Tensor> inputs) {
      return runReferenceNode(recurrentNode(op, inputs.size(), outs,
                                            {Attribute::ofInt("hidden_size", kHidden),
                                             Attribute::ofString("direction", dir)}),
                              inputs);
    };
    const auto both = run("bidirectional", in);
    for (int64_t d = 0; d < 2; ++d) {
      std::vector<Tensor> one = in;
      for (size_t i = 1; i < one.size(); ++i)
        if (i != 4) one[i] = direction(in[i], d);
      const auto single = run(d == 0 ? "forward" : "reverse", one);
      // Y is (seq, dirs, batch, hidden): direction d's block of each step.
      for (int64_t t = 0; t < kSeq; ++t)
        for (int64_t e = 0; e < kBatch * kHidden; ++e)
          EXPECT_NEAR(at(both[0], (t * 2 + d) * kBatch * kHidden + e),
                      at(single[0], t * kBatch * kHidden + e), 1e-12)
              << op << " direction " << d << " step " << t;
      for (size_t o = 1; o < outs; ++o)
        for (int64_t e = 0; e < kBatch * kHidden; ++e)
          EXPECT_NEAR(at(both[o], d * kBatch * kHidden + e), at(single[o], e), 1e-12)
              << op << " output " << o << " direction " << d;
    }
  }
}

TEST(Recurrent, ShortSequencesStopEarlyAndPadYWithZeros) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    for (const char* dir : {"forward", "reverse"}) {
      Rng rng(2);
      const std::vector<Tensor> in = randomInputs(op, 1, rng);  // batch row 1 has length 2
      const auto y = runReferenceNode(recurrentNode(op, in.size(), 2,
                                                    {Attribute::ofInt("hidden_size", kHidden),
                                                     Attribute::ofString("direction", dir)}),
                                      in);
      const bool reverse = std::string(dir) == "reverse";
      for (int64_t j = 0; j < kHidden; ++j) {
        EXPECT_EQ(at(y[0], (2 * kBatch + 1) * kHidden + j), 0) << op << " " << dir;
        // The last step run: t = 1 forward, t = 0 in reverse.
        const int64_t last = reverse ? 0 : 1;
        EXPECT_EQ(at(y[1], kHidden + j), at(y[0], (last * kBatch + 1) * kHidden + j))
            << op << " " << dir;
        EXPECT_NE(at(y[0], (last * kBatch + 1) * kHidden + j), 0) << op << " " << dir;
      }
    }
  }
}

TEST(Recurrent, BatchMajorLayoutTransposesInputsAndOutputs) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    Rng rng(3);
    const std::vector<Tensor> in = randomInputs(op, 1, rng);
    // X (seq, batch, in) -> (batch, seq, in); states (1, batch, hidden) -> (batch, 1, hidden).
    std::vector<Tensor> batchMajor = in;
    std::vector<double> x(static_cast<size_t>(kSeq * kBatch * kIn));
    for (int64_t t = 0; t < kSeq; ++t)
      for (int64_t b = 0; b < kBatch; ++b)
        for (int64_t i = 0; i < kIn; ++i)
          x[static_cast<size_t>((b * kSeq + t) * kIn + i)] = at(in[0], (t * kBatch + b) * kIn + i);
    batchMajor[0] = Tensor::fromVector<double>({kBatch, kSeq, kIn}, x);
    for (size_t s : {size_t{5}, size_t{6}})
      if (s < in.size() && (s != 6 || op == "LSTM"))
        batchMajor[s] =
            scalars({kBatch, 1, kHidden},
                    std::vector<double>(in[s].span<double>().begin(), in[s].span<double>().end()));
    const size_t outs = op == "LSTM" ? 3 : 2;
    const auto y0 = runReferenceNode(
        recurrentNode(op, in.size(), outs, {Attribute::ofInt("hidden_size", kHidden)}), in);
    const auto y1 = runReferenceNode(
        recurrentNode(op, in.size(), outs,
                      {Attribute::ofInt("hidden_size", kHidden), Attribute::ofInt("layout", 1)}),
        batchMajor);
    ASSERT_EQ(y1[0].shape(), (Shape{kBatch, kSeq, 1, kHidden})) << op;
    for (int64_t t = 0; t < kSeq; ++t)
      for (int64_t b = 0; b < kBatch; ++b)
        for (int64_t j = 0; j < kHidden; ++j)
          EXPECT_EQ(at(y1[0], (b * kSeq + t) * kHidden + j),
                    at(y0[0], (t * kBatch + b) * kHidden + j))
              << op;
    for (size_t o = 1; o < outs; ++o) {
      EXPECT_EQ(y1[o].shape(), (Shape{kBatch, 1, kHidden})) << op;
      for (int64_t e = 0; e < kBatch * kHidden; ++e) EXPECT_EQ(at(y1[o], e), at(y0[o], e)) << op;
    }
  }
}

// L = sum of w * y over every output; its gradient with respect to each input, by
// backpropagation and by central differences.
void expectGradientsMatch(const Node& node, const std::vector<Tensor>& in, uint64_t seed,
                          const std::string& what) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.nodes = {node};
  TensorMap feeds;
  for (size_t i = 0; i < in.size(); ++i) {
    m.graph.inputs.push_back(ValueInfo::tensor(node.inputs[i], in[i].dtype(), in[i].shape()));
    feeds[node.inputs[i]] = in[i];
  }
  const std::vector<Tensor> y = runReferenceNode(node, in);
  Rng rng(seed);
  Gradients seeds;
  for (size_t o = 0; o < y.size(); ++o) {
    m.graph.outputs.push_back(ValueInfo::tensor(node.outputs[o], y[o].dtype(), y[o].shape()));
    std::vector<double>& w = seeds[node.outputs[o]];
    for (int64_t e = 0; e < y[o].size(); ++e) w.push_back(rng.real(-1, 1));
  }
  auto loss = [&](const std::vector<Tensor>& x) {
    const std::vector<Tensor> out = runReferenceNode(node, x);
    double l = 0;
    for (size_t o = 0; o < out.size(); ++o)
      for (int64_t e = 0; e < out[o].size(); ++e)
        l += seeds[node.outputs[o]][static_cast<size_t>(e)] * out[o].toDouble(e);
    return l;
  };
  const Gradients g = backpropagate(m, runReferenceAllValues(m, feeds), seeds);
  int checked = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].dtype() != DType::Float64) continue;
    const std::vector<double>& gi = g.at(node.inputs[i]);
    for (int64_t e = 0; e < in[i].size(); ++e) {
      auto diff = [&](double h) {
        std::vector<Tensor> x = in;
        x[i].span<double>()[static_cast<size_t>(e)] += h;
        const double up = loss(x);
        x[i].span<double>()[static_cast<size_t>(e)] -= 2 * h;
        return (up - loss(x)) / (2 * h);
      };
      const double fd = diff(1e-6);
      if (std::fabs(fd - diff(1e-4)) > 1e-5 * (1 + std::fabs(fd))) continue;  // at a kink
      EXPECT_NEAR(gi[static_cast<size_t>(e)], fd, 1e-6 * (1 + std::fabs(fd)))
          << what << ": d/d " << node.inputs[i] << "[" << e << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 20) << what;
}

TEST(Recurrent, BackpropagationThroughTimeMatchesFiniteDifferencesForEveryOption) {
  const std::vector<std::vector<std::string>> activations = {
      {}, {"Relu", "Softsign", "Softplus"}, {"HardSigmoid", "Elu", "LeakyRelu"}};
  for (const std::string op : {"RNN", "GRU", "LSTM"})
    for (int variant = 0; variant < 12; ++variant) {
      const char* dir = variant % 3 == 0   ? "forward"
                        : variant % 3 == 1 ? "reverse"
                                           : "bidirectional";
      const int64_t dirs = variant % 3 == 2 ? 2 : 1;
      std::vector<Attribute> attrs = {Attribute::ofInt("hidden_size", kHidden),
                                      Attribute::ofString("direction", dir)};
      if (variant % 4 == 1) attrs.push_back(Attribute::ofFloat("clip", 0.7f));
      if (op == "GRU") attrs.push_back(Attribute::ofInt("linear_before_reset", variant % 2));
      if (op == "LSTM") attrs.push_back(Attribute::ofInt("input_forget", variant / 6));
      const std::vector<std::string>& acts = activations[static_cast<size_t>(variant / 4)];
      if (!acts.empty()) {
        Attribute a;
        a.name = "activations";
        a.kind = Attribute::Kind::Strings;
        const size_t per = static_cast<size_t>(gates(op) == 1 ? 1 : gates(op) == 3 ? 2 : 3);
        for (int64_t d = 0; d < dirs; ++d)
          a.strings.insert(a.strings.end(), acts.begin(),
                           acts.begin() + static_cast<std::ptrdiff_t>(per));
        attrs.push_back(a);
      }
      Rng rng(static_cast<uint64_t>(variant));
      const std::vector<Tensor> in = randomInputs(op, dirs, rng);
      expectGradientsMatch(recurrentNode(op, in.size(), op == "LSTM" ? 3 : 2, attrs), in,
                           static_cast<uint64_t>(variant),
                           op + " variant " + std::to_string(variant) + " (" + dir + ")");
    }
}

}  // namespace
}  // namespace nncheck
