// Function names from ELF symbol tables: dladdr finds the module holding an address and where it
// is loaded; the module's file gives .symtab (or .dynsym when stripped), kept sorted by address.
#include "backends/function_names.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace nncheck::coverage {

struct FunctionNames::Module {
  std::string path;
  uintptr_t base = 0;  // what to subtract from an address to get a symbol value
  struct Symbol {
    uint64_t start, size;
    std::string name;
  };
  std::vector<Symbol> functions;  // by start
};

namespace {

std::string demangled(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return name;
  std::string s(out);
  std::free(out);
  return s;
}

// The functions of one symbol table section (SHT_SYMTAB or SHT_DYNSYM), or none.
std::vector<FunctionNames::Module::Symbol> functionsIn(const std::vector<char>& file,
                                                       uint32_t type) {
  std::vector<FunctionNames::Module::Symbol> out;
  if (file.size() < sizeof(Elf64_Ehdr)) return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, file.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > file.size() ||
      eh.e_shnum > (file.size() - eh.e_shoff) / sizeof(Elf64_Shdr))
    return out;
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, file.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  auto inside = [&](const Elf64_Shdr& sh) {
    return sh.sh_offset <= file.size() && sh.sh_size <= file.size() - sh.sh_offset;
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type != type || sh.sh_entsize != sizeof(Elf64_Sym) || !inside(sh) ||
        sh.sh_link >= eh.e_shnum)
      continue;
    const Elf64_Shdr strings = section(sh.sh_link);
    if (!inside(strings)) continue;
    const char* names = file.data() + strings.sh_offset;
    for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, file.data() + sh.sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 ||
          sym.st_name >= strings.sh_size)
        continue;
      const char* name = names + sym.st_name;
      const size_t length = strnlen(name, strings.sh_size - sym.st_name);
      out.push_back({sym.st_value, sym.st_size, std::string(name, length)});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  return out;
}

std::unique_ptr<FunctionNames::Module> readModule(const Dl_info& info) {
  auto m = std::make_unique<FunctionNames::Module>();
  m->path = info.dli_fname ? info.dli_fname : "";
  std::ifstream in(m->path, std::ios::binary);
  if (!in) in.open("/proc/self/exe", std::ios::binary);  // the executable, named as it was run
  const std::vector<char> file{std::istreambuf_iterator<char>(in), {}};
  Elf64_Ehdr eh{};
  if (file.size() >= sizeof eh) std::memcpy(&eh, file.data(), sizeof eh);
  // A position-independent module's symbols are offsets from where it is loaded; a fixed
  // executable's are addresses.
  m->base = eh.e_type == ET_DYN ? reinterpret_cast<uintptr_t>(info.dli_fbase) : 0;
  m->functions = functionsIn(file, SHT_SYMTAB);
  if (m->functions.empty()) m->functions = functionsIn(file, SHT_DYNSYM);
  return m;
}

}  // namespace

FunctionNames::FunctionNames() = default;
FunctionNames::~FunctionNames() = default;

std::string FunctionNames::at(uintptr_t pc) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(pc), &info) == 0 || !info.dli_fbase) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(pc));
    return text;
  }
  const uintptr_t key = reinterpret_cast<uintptr_t>(info.dli_fbase);
  auto it = modules_.find(key);
  if (it == modules_.end()) it = modules_.emplace(key, readModule(info)).first;
  const Module& m = *it->second;
  const uint64_t at = pc - m.base;
  auto f = std::upper_bound(m.functions.begin(), m.functions.end(), at,
                            [](uint64_t a, const Module::Symbol& s) { return a < s.start; });
  if (f != m.functions.begin()) {
    --f;
    if (at < f->start + std::max<uint64_t>(f->size, 1)) return demangled(f->name);
  }
  const std::string file = m.path.substr(m.path.find_last_of('/') + 1);
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(at));
  return file + offset;
}

}  // namespace nncheck::coverage
