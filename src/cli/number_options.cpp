#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cli/commands.h"

namespace nncheck::cli {
namespace {

// What CLI11 2.1 lets through: strtod reads "nan" and "inf"; strtoll clamps a number past
// int64's range to its largest value; strtoull wraps "-1" to 2^64 - 1.
std::string soundNumber(const std::string& type, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (type == "FLOAT") {
    const double v = std::strtod(begin, &end);
    if (end != begin && (!std::isfinite(v) || errno == ERANGE))
      return "'" + text + "' is not a finite number";
  } else if (type == "INT") {
    std::strtoll(begin, &end, 0);
    if (end != begin && errno == ERANGE) return "'" + text + "' is past the largest number taken";
  } else if (type == "UINT") {
    const size_t first = text.find_first_not_of(" \t");
    if (first != std::string::npos && text[first] == '-')
      return "'" + text + "' is negative; expected a whole number from 0";
    std::strtoull(begin, &end, 0);
    if (end != begin && errno == ERANGE) return "'" + text + "' is past the largest number taken";
  }
  return "";  // anything else is CLI11's own conversion's to judge
}

}  // namespace

void requireSoundNumbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type == "FLOAT" || type == "INT" || type == "UINT")
      option->check(
          CLI::Validator([type](std::string& text) { return soundNumber(type, text); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    requireSoundNumbers(*sub);
}

}  // namespace nncheck::cli
