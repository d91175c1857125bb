// Function names from ELF symbol tables: the loader's list of modules (dl_iterate_phdr) tells
// which holds an address and where it is loaded; the module's file gives .symtab (or .dynsym
// when stripped), kept sorted by address. (Not dladdr: it scans a module's dynamic symbols at
// each call, and an engine has tens of thousands of functions to name.)
#include "backends/function_names.h"

#include <cxxabi.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
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

// A loaded module: where its segments lie, its name as the loader has it.
struct Loaded {
  std::string path;  // "" for the executable
  uintptr_t bias;    // what the loader added to the module's addresses
  std::vector<std::pair<uintptr_t, uintptr_t>> segments;
};

std::vector<Loaded> loadedModules() {
  std::vector<Loaded> out;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        Loaded m{info->dlpi_name ? info->dlpi_name : "", info->dlpi_addr, {}};
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            const uintptr_t begin = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            m.segments.emplace_back(begin, begin + info->dlpi_phdr[i].p_memsz);
          }
        static_cast<std::vector<Loaded>*>(data)->push_back(std::move(m));
        return 0;
      },
      &out);
  return out;
}

std::unique_ptr<FunctionNames::Module> readModule(const Loaded& loaded) {
  auto m = std::make_unique<FunctionNames::Module>();
  m->path = loaded.path.empty() ? "/proc/self/exe" : loaded.path;
  m->base = loaded.bias;  // symbol values are the module's addresses, before the bias
  std::ifstream in(m->path, std::ios::binary);
  const std::vector<char> file{std::istreambuf_iterator<char>(in), {}};
  m->functions = functionsIn(file, SHT_SYMTAB);
  if (m->functions.empty()) m->functions = functionsIn(file, SHT_DYNSYM);
  return m;
}

// Demangled names spelled as they are written.
std::string readable(std::string name) {
  static const std::pair<std::string, std::string> kSpelled[] = {
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
       "std::string"},
      {"std::__cxx11::", "std::"}};
  for (const auto& [from, to] : kSpelled)
    for (size_t at = name.find(from); at != std::string::npos; at = name.find(from, at + to.size()))
      name.replace(at, from.size(), to);
  return name;
}

// Code of the C++ library or of nncheck's headers that an engine's module instantiates, told by
// the mangled name's scope: std:: (St, and Sa Sb Ss Si So Sd, std::allocator and the string and
// stream abbreviations), __gnu_cxx::, nncheck::, after any nesting (N) and qualifiers (K V r).
bool isLibraryCode(std::string_view mangled) {
  if (mangled.substr(0, 2) != "_Z") return false;
  mangled.remove_prefix(2);
  if (!mangled.empty() && mangled[0] == 'N') mangled.remove_prefix(1);
  while (!mangled.empty() && (mangled[0] == 'K' || mangled[0] == 'V' || mangled[0] == 'r'))
    mangled.remove_prefix(1);
  if (mangled.size() >= 2 && mangled[0] == 'S' &&
      std::string_view("tabsiod").find(mangled[1]) != std::string_view::npos)
    return true;
  return mangled.substr(0, 10) == "9__gnu_cxx" || mangled.substr(0, 8) == "7nncheck";
}

}  // namespace

FunctionNames::FunctionNames() = default;
FunctionNames::~FunctionNames() = default;

FunctionNames::Function FunctionNames::at(uintptr_t pc) {
  if (loaded_.empty()) {
    for (const Loaded& l : loadedModules())
      for (const auto& [begin, end] : l.segments) loaded_.push_back({begin, end, l.path, l.bias});
    std::sort(loaded_.begin(), loaded_.end(),
              [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
  }
  auto seg = std::upper_bound(loaded_.begin(), loaded_.end(), pc,
                              [](uintptr_t a, const Segment& s) { return a < s.begin; });
  char text[40];
  if (seg == loaded_.begin() || pc >= std::prev(seg)->end) {
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(pc));
    return {text, false};
  }
  --seg;
  auto it = modules_.find(seg->bias);
  if (it == modules_.end())
    it = modules_.emplace(seg->bias, readModule(Loaded{seg->path, seg->bias, {}})).first;
  const Module& m = *it->second;
  const uint64_t at = pc - m.base;
  auto f = std::upper_bound(m.functions.begin(), m.functions.end(), at,
                            [](uint64_t a, const Module::Symbol& s) { return a < s.start; });
  if (f != m.functions.begin()) {
    --f;
    if (at < f->start + std::max<uint64_t>(f->size, 1))
      return {readable(demangled(f->name)), isLibraryCode(f->name)};
  }
  std::snprintf(text, sizeof text, "+0x%llx", static_cast<unsigned long long>(at));
  return {m.path.substr(m.path.find_last_of('/') + 1) + text, false};
}

}  // namespace nncheck::coverage
