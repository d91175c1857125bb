// A small, fully specified random source: the same seed gives the same stream on every
// platform and standard library (std:: distributions are implementation-defined).
//
//   Rng rng(seed);
//   int64_t d = rng.uniform(1, 8);     // inclusive
//   if (rng.chance(0.25)) ...
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace nncheck {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  // SplitMix64.
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi], inclusive.
  int64_t uniform(int64_t lo, int64_t hi) {
    if (hi < lo) throw std::logic_error("Rng::uniform: empty range");
    uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return span == 0 ? static_cast<int64_t>(next()) : lo + static_cast<int64_t>(next() % span);
  }
  // Uniform in [0, 1).
  double real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double real(double lo, double hi) { return lo + (hi - lo) * real(); }
  bool chance(double p) { return real() < p; }
  size_t index(size_t n) { return static_cast<size_t>(uniform(0, static_cast<int64_t>(n) - 1)); }
  template <class T>
  const T& pick(const std::vector<T>& xs) {
    return xs[index(xs.size())];
  }
  // An index drawn with the given non-negative weights (not all zero).
  size_t weighted(const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    double r = real() * total;
    for (size_t i = 0; i < w.size(); ++i) {
      if (r < w[i]) return i;
      r -= w[i];
    }
    for (size_t i = w.size(); i-- > 0;)
      if (w[i] > 0) return i;
    throw std::logic_error("Rng::weighted: all weights are zero");
  }
  template <class T>
  void shuffle(std::vector<T>& xs) {
    for (size_t i = xs.size(); i > 1; --i) std::swap(xs[i - 1], xs[index(i)]);
  }
  // A stream of its own, for a sub-task, that does not disturb this one's later draws.
  Rng fork(uint64_t salt) { return Rng(next() ^ (salt * 0xd1b54a32d192ed03ull)); }

 private:
  uint64_t state_;
};

}  // namespace nncheck
