// Named entries registered at static initialization, from nncheck or from a user's shared
// library: what the engine registry (nncheck/engine.h) and the oracle registry
// (nncheck/oracle.h) are made of, so both check names and report errors alike.
//
//   Registry<OracleInfo> r("oracle", "a library of oracles loads with --engine-lib");
//   r.add({.name = "mine", .check = ...});
//   const OracleInfo& o = r.at("mine");   // throws nncheck::Error listing the registered names
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nncheck/error.h"

namespace nncheck {

namespace detail {
// Entries registered from static initializers so far, of every registry: a shared library
// loaded with --engine-lib must register at least one (nncheck::loadEngineLibrary).
int& pluginRegistrations();
// The absolute path of the library nncheck::loadEngineLibrary is loading; empty otherwise.
std::string& loadingLibrary();
}  // namespace detail

// Info has a `name`; `validate` throws nncheck::Error for an entry that lacks what it needs.
template <class Info>
class Registry {
 public:
  Registry(std::string kind, std::string hint, void (*validate)(const Info&) = nullptr)
      : kind_(std::move(kind)), hint_(std::move(hint)), validate_(validate) {}

  // Throws nncheck::Error when the name is taken or missing, or `validate` refuses the entry.
  // `library`: the shared library registering it (empty: nncheck or the program itself). A name
  // is registered once: a second registration, from anywhere, is an error naming both origins,
  // and so is a library's entry taking the name of one that loads on demand (a built-in
  // engine's plug-in), which would otherwise stand in for it unseen.
  void add(Info info, const std::string& library = "") {
    if (info.name.empty()) throw Error(kind_ + " registry: an " + kind_ + " has no name");
    if (validate_) validate_(info);
    const std::string name = info.name;
    if (entries_.count(name))
      throw Error(kind_ + " '" + name + "' is registered twice: " + origin(this->library(name)) +
                  ", then " + origin(library));
    if (!library.empty() && onDemand_.list)
      if (const auto builtIn = onDemand_.list(); builtIn.count(name))
        throw Error(kind_ + " '" + name + "' of " + library + " takes the name of nncheck's " +
                    "built-in " + kind_ + " (" + builtIn.at(name) +
                    "); a library may not replace it: give yours a name of its own");
    entries_.emplace(name, std::move(info));
    if (!library.empty()) libraries_[name] = library;
  }

  // Throws nncheck::Error naming the entry and the known ones when it is unknown.
  const Info& at(const std::string& name) const {
    throwStartupErrors();
    auto it = entries_.find(name);
    if (it == entries_.end() && onDemand_.load && onDemand_.load(name)) {
      throwStartupErrors();
      it = entries_.find(name);
    }
    if (it != entries_.end()) return it->second;
    std::string known;
    for (const std::string& n : available()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown " + kind_ + " '" + name + "' (known: " + known + "; " + hint_ + ")");
  }
  bool contains(const std::string& name) const {
    return entries_.count(name) > 0 || (onDemand_.load && onDemand_.load(name));
  }
  // The shared library an entry came from (what --engine-lib loads it again with); empty for
  // one built in or unknown.
  std::string library(const std::string& name) const {
    auto it = libraries_.find(name);
    return it == libraries_.end() ? std::string() : it->second;
  }
  // The registered entries, sorted.
  std::vector<std::string> names() const {
    throwStartupErrors();
    std::vector<std::string> out;
    for (const auto& [n, e] : entries_) out.push_back(n);
    return out;
  }
  // The registered entries and those that would load on demand, sorted, each once.
  std::vector<std::string> available() const {
    std::vector<std::string> out = names();
    if (onDemand_.list)
      for (const auto& [n, file] : onDemand_.list())
        if (!entries_.count(n)) out.push_back(n);
    std::sort(out.begin(), out.end());
    return out;
  }

  // Entries kept outside the process until asked for (the built-in engines' plug-ins): `load`
  // loads the one of a name that is not registered yet and says whether there was one; `list`
  // names them all, with the file each comes from, without loading any.
  struct OnDemand {
    std::function<bool(const std::string& name)> load;
    std::function<std::map<std::string, std::string>()> list;
  };
  void setOnDemand(OnDemand onDemand) { onDemand_ = std::move(onDemand); }

  // What the registration macros call at static initialization, where nothing may throw (a
  // library's initializers run inside the loader): errors are kept, and the next at() or
  // names() throws them.
  void addAtStartup(Info (*describe)()) noexcept {
    ++detail::pluginRegistrations();
    try {
      add(describe(), detail::loadingLibrary());
    } catch (const std::exception& e) {
      try {
        startupErrors_.push_back(e.what());
      } catch (...) {  // out of memory at startup: nothing to report with
      }
    }
  }

 private:
  static std::string origin(const std::string& library) {
    return library.empty() ? "by nncheck or this program" : "by " + library;
  }
  void throwStartupErrors() const {
    if (startupErrors_.empty()) return;
    std::string all;
    for (const std::string& e : startupErrors_) all += (all.empty() ? "" : "; ") + e;
    throw Error(kind_ + " registry: " + all);
  }
  std::string kind_, hint_;
  std::map<std::string, std::string> libraries_;
  void (*validate_)(const Info&);
  std::map<std::string, Info> entries_;
  std::vector<std::string> startupErrors_;
  OnDemand onDemand_;
};

}  // namespace nncheck
