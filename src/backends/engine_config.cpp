// Reading an engine's configuration text (nncheck/engine.h's ConfigText).
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "nncheck/engine.h"
#include "nncheck/error.h"

namespace nncheck {

ConfigText::ConfigText(std::string engine, std::string text, std::string expected)
    : engine_(std::move(engine)), text_(std::move(text)), expected_(std::move(expected)) {
  std::stringstream in(text_);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    items_.push_back(
        {item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1), item});
  }
}

void ConfigText::reject(const Item& item, const std::string& expected) const {
  throw Error(engine_ + " configuration '" + text_ + "': cannot read '" + item.text +
              "' (expected " + (expected.empty() ? expected_ : expected) + ")");
}

bool ConfigText::onOff(const Item& item) const {
  if (item.value != "on" && item.value != "off") reject(item, item.key + "=on|off");
  return item.value == "on";
}

size_t ConfigText::choice(const Item& item, const std::vector<std::string>& choices) const {
  const auto it = std::find(choices.begin(), choices.end(), item.value);
  if (it == choices.end()) {
    std::string all;
    for (const std::string& c : choices) all += (all.empty() ? "" : "|") + c;
    reject(item, item.key + "=" + all);
  }
  return static_cast<size_t>(it - choices.begin());
}

int ConfigText::count(const Item& item, int lo, int hi) const {
  const std::string& v = item.value;
  const bool digits = !v.empty() && v.size() <= 9 &&
                      std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  const long n = digits ? std::stol(v) : -1;
  if (!digits || n < lo || n > hi)
    reject(item, item.key + "=N, N from " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(n);
}

std::vector<std::string> ConfigText::names(const Item& item) const {
  std::set<std::string> out;
  std::stringstream in(item.value);
  std::string name;
  const auto isNameChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  };
  while (std::getline(in, name, '+')) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), isNameChar))
      reject(item, item.key + "=Name+Name");
    out.insert(name);
  }
  if (out.empty() || item.value.back() == '+') reject(item, item.key + "=Name+Name");
  return {out.begin(), out.end()};
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : "+") + n;
  return out;
}

std::vector<std::string> mergeNames(std::vector<std::string> names,
                                    const std::vector<std::string>& more) {
  names.insert(names.end(), more.begin(), more.end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace nncheck
