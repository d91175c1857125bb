#include "core/shell_words.h"

#include <string_view>

#include "nncheck/error.h"

namespace nncheck {

std::string shellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-./=,:+@%") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shellLine(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty()) line += ' ';
    line += shellQuote(w);
  }
  return line;
}

std::vector<std::string> splitShellWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quote == '\'') {
      if (ch == '\'')
        quote = 0;
      else
        word += ch;
    } else if (quote == '"') {
      // In double quotes a backslash escapes only what the shell would expand or end on.
      if (ch == '"')
        quote = 0;
      else if (ch == '\\' && i + 1 < line.size() &&
               std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos)
        word += line[++i];
      else
        word += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      inWord = true;
    } else if (ch == '\\' && i + 1 < line.size()) {
      word += line[++i];
      inWord = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (inWord) words.push_back(word);
      word.clear();
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote) {
    std::string message = "the command line '";
    message += line;
    message += "' leaves a quote (";
    message += quote;
    message += ") open";
    throw Error(message);
  }
  if (inWord) words.push_back(word);
  return words;
}

}  // namespace nncheck
