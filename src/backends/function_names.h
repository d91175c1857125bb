// The name of the function holding a code address of this process, read from the ELF symbol
// table of the module that holds it (the executable or a shared library), demangled. Needs no
// debug information and no external symbolizer, only symbol tables a release build keeps
// (a stripped module gives its exported symbols, or "module+0xoffset").
//
//   coverage::FunctionNames names;
//   std::string f = names.at(pc).name;   // "pc_table_fixture::neverReachedLarge(int)"
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nncheck::coverage {

class FunctionNames {
 public:
  FunctionNames();
  ~FunctionNames();
  FunctionNames(const FunctionNames&) = delete;
  FunctionNames& operator=(const FunctionNames&) = delete;

  struct Function {
    std::string name;  // demangled; "module+0xoffset" when no symbol holds the address
    // Code of the C++ standard library or of nncheck's headers, which a module instantiates
    // (std::, __gnu_cxx::, nncheck::): not the engine's own.
    bool library = false;
  };
  Function at(uintptr_t pc);

  struct Module;  // one module's function symbols (function_names.cpp)

 private:
  struct Segment {
    uintptr_t begin, end;
    std::string path;  // of its module ("" for the executable)
    uintptr_t bias;    // of its module
  };
  std::vector<Segment> loaded_;  // of every module, by address; listed at the first use
  // By the module's load bias; each read once.
  std::map<uintptr_t, std::unique_ptr<Module>> modules_;
};

}  // namespace nncheck::coverage
