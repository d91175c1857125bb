#include "harness/culprit.h"

#include <algorithm>
#include <set>

namespace nncheck {
namespace {

std::vector<std::string> without(const std::vector<std::string>& all,
                                 const std::vector<std::string>& keep) {
  std::vector<std::string> out;
  std::set_difference(all.begin(), all.end(), keep.begin(), keep.end(), std::back_inserter(out));
  return out;
}

std::string listed(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return s;
}

}  // namespace

std::optional<Culprit> findCulprit(
    std::vector<std::string> optimizations,
    const std::function<bool(const std::vector<std::string>&)>& fails,
    const std::vector<std::vector<std::string>>& tryFirst, bool searchBeyond) {
  std::sort(optimizations.begin(), optimizations.end());
  optimizations.erase(std::unique(optimizations.begin(), optimizations.end()), optimizations.end());
  Culprit c;
  c.searched = static_cast<int>(optimizations.size());
  // Does the case fail with only `enabled` on?
  auto failsWith = [&](const std::vector<std::string>& enabled) {
    ++c.runs;
    return fails(without(optimizations, enabled));
  };
  // Only the sets made of these optimizations can be this failure's (a known bug's set of
  // another configuration's switches is none here): without any, and no search, nothing runs.
  const auto fits = [&](std::vector<std::string> set) {
    std::sort(set.begin(), set.end());
    return !set.empty() &&
           std::includes(optimizations.begin(), optimizations.end(), set.begin(), set.end());
  };
  if (optimizations.empty() ||
      (!searchBeyond && std::none_of(tryFirst.begin(), tryFirst.end(), fits)) || failsWith({}) ||
      !failsWith(optimizations))
    return std::nullopt;

  // A set found before that fails alone and none of whose subsets one smaller does: 1-minimal.
  const auto isCulprit = [&](std::vector<std::string> set) {
    std::sort(set.begin(), set.end());
    if (!fits(set) || !failsWith(set)) return false;
    for (const std::string& name : set)
      if (failsWith(without(set, {name}))) return false;
    return true;
  };
  std::vector<std::string> failing = optimizations;
  bool known = false;
  for (const std::vector<std::string>& set : tryFirst)
    if (isCulprit(set)) {
      failing = set;
      std::sort(failing.begin(), failing.end());
      known = true;
      break;
    }
  if (!known && !searchBeyond) return std::nullopt;

  // ddmin: split the failing set into n parts; keep a part, or the complement of one, that
  // still fails; else split finer, until single optimizations are tried.
  size_t n = 2;
  while (!known && failing.size() >= 2) {
    const size_t size = failing.size();
    n = std::min(n, size);
    std::vector<std::vector<std::string>> parts(n);
    for (size_t i = 0; i < size; ++i) parts[i * n / size].push_back(failing[i]);
    bool reduced = false;
    for (const auto& part : parts)
      if (failsWith(part)) {
        failing = part;
        n = 2;
        reduced = true;
        break;
      }
    if (!reduced && n > 2)
      for (const auto& part : parts) {
        std::vector<std::string> complement = without(failing, part);
        if (failsWith(complement)) {
          failing = std::move(complement);
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
          break;
        }
      }
    if (reduced) continue;
    if (n >= size) break;  // every single one tried: 1-minimal
    n = std::min(size, 2 * n);
  }
  c.needed = failing;
  ++c.runs;
  c.workaroundPasses = !fails(failing);
  return c;
}

std::string describeCulprit(const Culprit& c) {
  const bool one = c.needed.size() == 1;
  return "fails with only " + listed(c.needed) + " enabled; " +
         (c.workaroundPasses ? std::string("passes with ") + (one ? "it" : "them") + " disabled"
                             : std::string("still fails with ") + (one ? "it" : "them") +
                                   " disabled: another set of optimizations fails it too");
}

}  // namespace nncheck
