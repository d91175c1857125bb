// SanitizerCoverage's callbacks and the counters behind them. Module constructors of
// instrumented code call the *_init callbacks before main, so nothing here needs a constructor:
// fixed arrays of static storage, and a registry that is a function-local static.
#include "backends/coverage.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string_view>

#include "backends/function_names.h"

namespace nncheck::coverage {
namespace {

constexpr size_t kPcEdges = size_t{1} << 16;  // trace-pc: hashed block addresses
constexpr size_t kGuards = size_t{1} << 20;   // trace-pc-guard: one counter per guard
uint8_t pcCounters[kPcEdges];
uint8_t guardCounters[kGuards];
uint32_t guardsUsed = 0;  // guards are numbered 1..guardsUsed (0 means "not yet numbered")

// inline-8bit-counters: each instrumented module's own counter array.
struct Region {
  uint8_t* begin;
  uint8_t* end;
};
// pc-table: per block, its address and flags (1: a function's entry), in the order of the
// counters the module registered just before (its constructor calls the two in turn).
struct PcTable {
  const uintptr_t* begin;  // pairs (pc, flags)
  size_t blocks;
  uint32_t firstFeature;  // the feature of the first block's counter
};
struct Regions {
  std::mutex lock;
  std::vector<Region> list;
  uint32_t features = 0;  // the regions' counters so far
  // The counters registered last, which a pc-table that follows describes.
  uint32_t lastFirst = 0;
  size_t lastCount = 0;
  std::vector<PcTable> pcTables;
};
Regions& regions() {
  static Regions r;
  return r;
}

void addFeatures(const uint8_t* counters, size_t n, uint32_t first, std::vector<uint32_t>& out) {
  for (size_t i = 0; i < n; ++i)
    if (counters[i]) out.push_back(first + static_cast<uint32_t>(i));
}

}  // namespace

void reset() {
  std::memset(pcCounters, 0, sizeof pcCounters);
  std::memset(guardCounters, 0, std::min<size_t>(guardsUsed + size_t{1}, kGuards));
  std::lock_guard<std::mutex> hold(regions().lock);
  for (const Region& r : regions().list)
    std::memset(r.begin, 0, static_cast<size_t>(r.end - r.begin));
}

std::vector<uint32_t> collect() {
  std::vector<uint32_t> out;
  addFeatures(pcCounters, kPcEdges, 0, out);
  const size_t guards = std::min<size_t>(guardsUsed + size_t{1}, kGuards);
  addFeatures(guardCounters, guards, static_cast<uint32_t>(kPcEdges), out);
  uint32_t next = static_cast<uint32_t>(kPcEdges + kGuards);
  std::lock_guard<std::mutex> hold(regions().lock);
  for (const Region& r : regions().list) {
    const size_t n = static_cast<size_t>(r.end - r.begin);
    addFeatures(r.begin, n, next, out);
    next += static_cast<uint32_t>(n);
  }
  return out;  // sorted: indices only grow
}

namespace {
uint32_t fnv1a(std::string_view text, uint32_t h = 2166136261u) {
  for (unsigned char c : text) h = (h ^ c) * 16777619u;
  return h;
}
}  // namespace

void addOptimizationFeatures(const std::vector<std::string>& applied,
                             std::vector<uint32_t>& features) {
  if (applied.empty()) return;
  constexpr uint32_t kOne = 0x80000000u, kPair = 0xC0000000u, kLow = 0x3fffffffu;
  for (size_t i = 0; i < applied.size(); ++i) {
    features.push_back(kOne | (fnv1a(applied[i]) & kLow));
    for (size_t j = i + 1; j < applied.size(); ++j)
      features.push_back(kPair | (fnv1a(applied[j], fnv1a(applied[i]) ^ 0x5bd1e995u) & kLow));
  }
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
}

void Reached::add(const std::vector<uint32_t>& features) {
  size_t counters;
  {
    std::lock_guard<std::mutex> hold(regions().lock);
    counters = kPcEdges + kGuards + regions().features;
  }
  for (uint32_t f : features) {
    if (f >= counters) break;  // sorted: the rest are optimizations' too
    if (f >= counters_.size()) counters_.resize(f + size_t{1});
    counters_[f] = true;
  }
}

FunctionReach Reached::functions() const {
  FunctionReach out;
  std::vector<PcTable> tables;
  {
    std::lock_guard<std::mutex> hold(regions().lock);
    tables = regions().pcTables;
  }
  FunctionNames names;
  auto reached = [&](uint32_t f) { return f < counters_.size() && counters_[f]; };
  for (const PcTable& t : tables) {
    // A module no run entered is not the engine's (a test binary links other instrumented code).
    bool entered = false;
    for (size_t k = 0; k < t.blocks && !entered; ++k)
      entered = reached(t.firstFeature + static_cast<uint32_t>(k));
    if (!entered) continue;
    for (size_t b = 0, end; b < t.blocks; b = end) {
      end = b + 1;  // a function's blocks run to the next entry
      while (end < t.blocks && !(t.begin[2 * end + 1] & 1)) ++end;
      FunctionNames::Function f = names.at(t.begin[2 * b]);
      if (f.library) continue;
      size_t hit = 0;
      for (size_t k = b; k < end; ++k) hit += reached(t.firstFeature + static_cast<uint32_t>(k));
      ++out.functions;
      out.blocks += end - b;
      out.reachedBlocks += hit;
      if (hit > 0)
        ++out.reachedFunctions;
      else
        out.unreached.push_back({std::move(f.name), end - b});
    }
  }
  std::sort(out.unreached.begin(), out.unreached.end(), [](const auto& a, const auto& b) {
    return a.blocks != b.blocks ? a.blocks > b.blocks : a.name < b.name;
  });
  return out;
}

std::string FunctionReach::summary(size_t shown) const {
  if (functions == 0) return "";
  std::string s = "engine functions never reached: " + std::to_string(unreached.size()) + " of " +
                  std::to_string(functions) + " (" + std::to_string(blocks - reachedBlocks) +
                  " of " + std::to_string(blocks) + " blocks)";
  for (size_t i = 0; i < unreached.size() && i < shown; ++i)
    s += (i ? ", " : ", largest first: ") + unreached[i].name + " " +
         std::to_string(unreached[i].blocks) + (unreached[i].blocks == 1 ? " block" : " blocks");
  if (unreached.size() > shown) s += ", ...";
  return s;
}

}  // namespace nncheck::coverage

#ifndef NNCHECK_NO_COVERAGE_CALLBACKS
using nncheck::coverage::guardCounters;
using nncheck::coverage::guardsUsed;
using nncheck::coverage::kGuards;
using nncheck::coverage::kPcEdges;
using nncheck::coverage::pcCounters;

extern "C" {

// trace-pc: a call per basic block, counted by its address. (Not AFL's edge of this block and
// the previous one: in an engine's loop over nodes that pairs each node's op with the one
// before, thousands of features that say nothing about which rewrites ran.)
__attribute__((visibility("default"))) void __sanitizer_cov_trace_pc() {
  const uint64_t here = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  uint8_t& c = pcCounters[(here * 0x9e3779b97f4a7c15ull) >> 48];
  c = static_cast<uint8_t>(c + (c != 255));
}

__attribute__((visibility("default"))) void __sanitizer_cov_trace_pc_guard_init(uint32_t* start,
                                                                                uint32_t* stop) {
  if (start == stop) return;
  if (!*start)  // numbered already when the callback comes twice
    for (uint32_t* g = start; g < stop; ++g)
      *g = guardsUsed < kGuards - 1 ? ++guardsUsed : static_cast<uint32_t>(kGuards - 1);
  auto& r = nncheck::coverage::regions();
  std::lock_guard<std::mutex> hold(r.lock);
  r.lastFirst = static_cast<uint32_t>(kPcEdges + *start);
  r.lastCount = static_cast<size_t>(stop - start);
}

__attribute__((visibility("default"))) void __sanitizer_cov_trace_pc_guard(uint32_t* guard) {
  uint8_t& c = guardCounters[*guard];
  c = static_cast<uint8_t>(c + (c != 255));
}

__attribute__((visibility("default"))) void __sanitizer_cov_8bit_counters_init(uint8_t* start,
                                                                               uint8_t* stop) {
  if (start == stop) return;
  auto& r = nncheck::coverage::regions();
  std::lock_guard<std::mutex> hold(r.lock);
  r.list.push_back({start, stop});
  r.lastFirst = static_cast<uint32_t>(kPcEdges + kGuards + r.features);
  r.lastCount = static_cast<size_t>(stop - start);
  r.features += static_cast<uint32_t>(r.lastCount);
}

__attribute__((visibility("default"))) void __sanitizer_cov_pcs_init(const uintptr_t* begin,
                                                                     const uintptr_t* end) {
  auto& r = nncheck::coverage::regions();
  std::lock_guard<std::mutex> hold(r.lock);
  const size_t blocks = static_cast<size_t>(end - begin) / 2;
  // A table that does not match the counters before it (trace-pc has none) names nothing.
  if (blocks == 0 || blocks != r.lastCount) return;
  r.pcTables.push_back({begin, blocks, r.lastFirst});
  r.lastCount = 0;
}

}  // extern "C"
#endif
