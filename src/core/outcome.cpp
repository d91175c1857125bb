#include "nncheck/outcome.h"

#include <array>
#include <utility>

namespace nncheck {
namespace {

constexpr std::array<std::pair<Outcome, std::string_view>, 7> kNames = {{
    {Outcome::Pass, "pass"},
    {Outcome::Unsupported, "unsupported"},
    {Outcome::NonFinite, "nonfinite"},
    {Outcome::Mismatch, "mismatch"},
    {Outcome::Crash, "crash"},
    {Outcome::Hang, "hang"},
    {Outcome::Error, "error"},
}};

}  // namespace

std::string_view outcomeName(Outcome o) {
  for (const auto& [outcome, name] : kNames)
    if (outcome == o) return name;
  return "?";
}

std::optional<Outcome> outcomeFromName(std::string_view name) {
  for (const auto& [outcome, n] : kNames)
    if (n == name) return outcome;
  return std::nullopt;
}

bool isFailure(Outcome o) {
  return o == Outcome::Mismatch || o == Outcome::Crash || o == Outcome::Hang || o == Outcome::Error;
}

}  // namespace nncheck
