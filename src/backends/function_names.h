// The name of the function holding a code address of this process, read from the ELF symbol
// table of the module that holds it (the executable or a shared library), demangled. Needs no
// debug information and no external symbolizer, only symbol tables a release build keeps
// (a stripped module gives its exported symbols, or "module+0xoffset").
//
//   coverage::FunctionNames names;
//   std::string f = names.at(pc);   // "nncheck::fixture::neverReached(int)"
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace nncheck::coverage {

class FunctionNames {
 public:
  FunctionNames();
  ~FunctionNames();
  FunctionNames(const FunctionNames&) = delete;
  FunctionNames& operator=(const FunctionNames&) = delete;

  std::string at(uintptr_t pc);

  struct Module;  // one module's function symbols (symbolize.cpp)

 private:
  // By the module's load address; each read once.
  std::map<uintptr_t, std::unique_ptr<Module>> modules_;
};

}  // namespace nncheck::coverage
