// Einsum: a sum of products over index letters, with diagonals (a letter repeated in a term),
// broadcast ellipses and the implicit output (the letters that appear once, in order).
#include <algorithm>
#include <cctype>
#include <map>

#include "ops/gradients.h"
#include "ops/infer.h"

namespace nncheck::ops {
namespace {

// An equation's terms with spaces removed and each "..." written as '.'.
struct EinsumTerms {
  std::vector<std::string> inputs;
  std::string output;
};

EinsumTerms parseEinsum(const std::string& equation) {
  std::string eq;
  for (size_t i = 0; i < equation.size(); ++i) {
    const char c = equation[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (equation.compare(i, 3, "...") != 0)
        throw ShapeError("Einsum: equation '" + equation + "' has a '.' outside an ellipsis");
      eq += '.';
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != ',' && c != '-' && c != '>')
      throw ShapeError("Einsum: equation '" + equation + "' has the character '" +
                       std::string(1, c) + "'");
    eq += c;
  }
  EinsumTerms t;
  const size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    t.inputs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const std::string& term : t.inputs)
    if (std::count(term.begin(), term.end(), '.') > 1 || term.find('-') != std::string::npos ||
        term.find('>') != std::string::npos)
      throw ShapeError("Einsum: equation '" + equation + "' has a malformed input term");
  if (arrow != std::string::npos) {
    t.output = eq.substr(arrow + 2);
    return t;
  }
  // Implicit: the ellipsis first, then the letters that appear once, sorted.
  std::map<char, int> count;
  bool ellipsis = false;
  for (const std::string& term : t.inputs)
    for (char c : term) c == '.' ? void(ellipsis = true) : void(++count[c]);
  if (ellipsis) t.output += '.';
  for (const auto& [c, n] : count)
    if (n == 1) t.output += c;
  return t;
}

// The geometry every instantiation shares: each letter's size, and the ellipsis dims of each
// input, which broadcast together.
template <class I>
struct EinsumGeometry {
  EinsumTerms terms;
  std::map<char, I> size;
  std::vector<std::vector<I>> ellipses;  // per input (empty without one)
  std::vector<I> ellipsis;               // broadcast
  std::vector<I> out;
};

template <class I>
EinsumGeometry<I> einsumGeometry(Rule<I>& r) {
  EinsumGeometry<I> g;
  g.terms = parseEinsum(r.attrString("equation"));
  r.check(g.terms.inputs.size() == r.inputCount(), "the equation has one term per input");
  for (size_t i = 0; i < g.terms.inputs.size(); ++i) {
    const std::string& term = g.terms.inputs[i];
    const bool hasEllipsis = term.find('.') != std::string::npos;
    const int64_t letters = static_cast<int64_t>(term.size()) - (hasEllipsis ? 1 : 0);
    r.check(hasEllipsis ? r.rank(i) >= letters : r.rank(i) == letters,
            "input " + std::to_string(i) + "'s rank fits its term '" + term + "'");
    const int64_t ellipsisRank = r.rank(i) - letters;
    size_t axis = 0;
    g.ellipses.emplace_back();
    for (char c : term) {
      if (c == '.') {
        for (int64_t e = 0; e < ellipsisRank; ++e) g.ellipses.back().push_back(r.dims(i)[axis++]);
        continue;
      }
      const I& d = r.dims(i)[axis++];
      auto it = g.size.find(c);
      if (it == g.size.end())
        g.size.emplace(c, d);
      else
        r.require(it->second == d, std::string("the dims of letter '") + c + "' agree");
    }
  }
  g.ellipsis = broadcastShapes(r, g.ellipses);
  for (char c : g.terms.output) {
    if (c == '.') {
      g.out.insert(g.out.end(), g.ellipsis.begin(), g.ellipsis.end());
      continue;
    }
    auto it = g.size.find(c);
    r.check(it != g.size.end(), std::string("output letter '") + c + "' appears in an input");
    r.check(std::count(g.terms.output.begin(), g.terms.output.end(), c) == 1,
            std::string("output letter '") + c + "' appears once in the output");
    g.out.push_back(it->second);
  }
  return g;
}

// Calls visit(output offset, input offsets) for every point of the summation: the broadcast
// ellipsis and every letter, summed letters included.
template <class F>
void forEachEinsumTerm(const KernelCall& k, F&& visit) {
  Rule<int64_t> r = concreteRule(k);
  const EinsumGeometry<int64_t> g = einsumGeometry(r);
  std::vector<char> letters;
  for (const auto& [c, n] : g.size) letters.push_back(c);
  // The point: ellipsis coordinates, then one per letter.
  Shape extent = g.ellipsis;
  for (char c : letters) extent.push_back(g.size.at(c));
  const auto letterAt = [&](char c) {
    return g.ellipsis.size() +
           static_cast<size_t>(std::find(letters.begin(), letters.end(), c) - letters.begin());
  };
  // An operand's offset at the point: its letters' coordinates, its ellipsis right-aligned to the
  // broadcast one (size-1 dims stay at 0).
  const auto offsetOf = [&](const std::string& term, const Shape& shape,
                            const std::vector<int64_t>& ellipsisDims,
                            const std::vector<int64_t>& point) {
    int64_t off = 0;
    size_t axis = 0;
    for (char c : term) {
      if (c == '.') {
        const size_t skip = g.ellipsis.size() - ellipsisDims.size();
        for (size_t e = 0; e < ellipsisDims.size(); ++e, ++axis)
          off = off * shape[axis] + (ellipsisDims[e] == 1 ? 0 : point[skip + e]);
        continue;
      }
      off = off * shape[axis++] + point[letterAt(c)];
    }
    return off;
  };
  const int64_t points = elementCount(extent);
  std::vector<int64_t> point(extent.size(), 0), in(k.inputCount());
  for (int64_t p = 0; p < points; ++p) {
    pollDeadline();
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = offsetOf(g.terms.inputs[i], k.in(i).shape(), g.ellipses[i], point);
    visit(offsetOf(g.terms.output, g.out, g.ellipsis, point), in);
    for (size_t a = extent.size(); a-- > 0;) {
      if (++point[a] < extent[a]) break;
      point[a] = 0;
    }
  }
}

// Equations a generator draws; any other is supported too.
const std::vector<std::string> kSampledEquations = {"ij->ji",    "ij->i",
                                                    "ij->",      "ii->i",
                                                    "ijk->kji",  "...ij->...ji",
                                                    "ij,jk->ik", "bij,bjk->bik",
                                                    "i,i->",     "i,j->ij",
                                                    "ij,j->i",   "ij,ij->ij",
                                                    "ij,kj->ik", "...ij,...jk->...ik",
                                                    "ij,jk",     "ii"};

}  // namespace

void registerEinsum(Registry& reg) {
  reg.add(std::move(OpSpec("Einsum", 12)
                        // Long float32 accumulations (the reference sums in double).
                        .tolerance({1e-3, 1e-4})
                        .onnxPartialShapes()
                        .types("T", floatTypes())
                        .variadicInput("Inputs", "T")
                        .sampleShape([](SampleContext& c) {
                          // Input i's term with input 0's letter sizes where it shares letters.
                          const Attribute* eq = c.node.attribute("equation");
                          const size_t i = c.inputShapes.size() - 1;
                          EinsumTerms t;
                          try {
                            t = parseEinsum(eq ? eq->s : "");
                          } catch (const Error&) {
                            return c.shape(0);
                          }
                          if (i >= t.inputs.size() || t.inputs[0].find('.') != std::string::npos)
                            return c.shape(0);
                          std::map<char, int64_t> size;
                          for (size_t a = 0; a < t.inputs[0].size() && a < c.shape(0).size(); ++a)
                            size.emplace(t.inputs[0][a], c.shape(0)[a]);
                          Shape s;
                          for (char ch : t.inputs[i]) {
                            if (ch == '.') continue;
                            auto it = size.emplace(ch, c.rng.uniform(1, c.maxDim)).first;
                            s.push_back(it->second);
                          }
                          return s;
                        })
                        .output("Output")
                        .attr([] {
                          AttrSpec a = stringAttr("equation", "", {});
                          a.defaultValue.reset();
                          a.required = true;
                          a.samples = kSampledEquations;
                          return a;
                        }())
                        .shapeRule([](auto& r) { r.output(0, einsumGeometry(r).out); })
                        .kernel([](KernelCall& k) {
                          std::vector<double> acc(static_cast<size_t>(k.out(0).size()), 0.0);
                          forEachEinsumTerm(k, [&](int64_t o, const std::vector<int64_t>& in) {
                            double p = 1;
                            for (size_t i = 0; i < in.size(); ++i) p *= k.in(i).toDouble(in[i]);
                            acc[static_cast<size_t>(o)] += p;
                          });
                          visitCompute(k.out(0).dtype(), [&]<class T>() {
                            auto y = k.out(0).span<T>();
                            for (size_t e = 0; e < acc.size(); ++e) y[e] = fromDouble<T>(acc[e]);
                          });
                        })
                        // d out / d input i at a point: the product of the other inputs there.
                        .gradient([](GradCall& g) {
                          const std::vector<double>* dy = g.dOut(0);
                          if (!dy) return;
                          forEachEinsumTerm(g.kernel(),
                                            [&](int64_t o, const std::vector<int64_t>& in) {
                                              for (size_t i = 0; i < in.size(); ++i) {
                                                std::vector<double>* dx = g.dIn(i);
                                                if (!dx) continue;
                                                double others = 1;
                                                for (size_t j = 0; j < in.size(); ++j)
                                                  if (j != i) others *= g.in(j).toDouble(in[j]);
                                                (*dx)[static_cast<size_t>(in[i])] +=
                                                    (*dy)[static_cast<size_t>(o)] * others;
                                              }
                                            });
                        })));
}

}  // namespace nncheck::ops
