// Command lines as a POSIX shell reads them: a word quoted for printing in a command a person
// copies, and a line split back into words (quotes and backslashes, no expansion).
//
//   shellQuote("my dir/x")                  // 'my dir/x'
//   splitShellWords("python3 'my e.py'")    // {"python3", "my e.py"}
//   shellLine({"python3", "my e.py"})       // python3 'my e.py'

#pragma once

#include <string>
#include <vector>

namespace nncheck {

// The word unchanged when it holds only characters no shell reads specially, else single-quoted.
std::string shellQuote(const std::string& word);

// The words as one command line, each quoted as needed, separated by spaces.
std::string shellLine(const std::vector<std::string>& words);

// Throws nncheck::Error naming the line when a quote is not closed.
std::vector<std::string> splitShellWords(const std::string& line);

}  // namespace nncheck
