#include "core/temporary_folders.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "nncheck/error.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

// The folders a signal's handler removes: fixed slots (no allocation in the handler), each with
// the process that made it, since a forked child inherits the table but not the folders.
constexpr int kSlots = 64;
struct Slot {
  std::atomic<pid_t> owner{0};  // 0: free
  char path[4096];
};
Slot slots[kSlots];

void remember(const std::string& folder) {
  if (folder.size() >= sizeof slots[0].path) return;  // the next start sweeps it
  for (Slot& s : slots) {
    pid_t free = 0;
    if (!s.owner.compare_exchange_strong(free, -1)) continue;
    std::memcpy(s.path, folder.c_str(), folder.size() + 1);
    s.owner.store(::getpid());
    return;
  }
}

void forget(const std::string& folder) {
  for (Slot& s : slots)
    if (s.owner.load() == ::getpid() && folder == s.path) s.owner.store(0);
}

// Removes what `dir` (open) holds; system calls only.
void removeContents(int dir, int depth) {
  if (depth > 64) return;
  struct Entry {  // the kernel's linux_dirent64
    ino64_t ino;
    off64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
  };
  char buf[2048];
  // Pass after pass from the start (what a pass removes moves what getdents returns), until a
  // pass removes nothing.
  for (int pass = 0; pass < 16; ++pass) {
    ::lseek(dir, 0, SEEK_SET);
    bool removed = false;
    for (long n; (n = ::syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0;)
      for (long at = 0; at < n;) {
        const Entry* e = reinterpret_cast<const Entry*>(buf + at);
        at += e->reclen;
        if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0) continue;
        if (::unlinkat(dir, e->name, 0) != 0) {
          const int sub = ::openat(dir, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub < 0) continue;
          removeContents(sub, depth + 1);
          ::close(sub);
          if (::unlinkat(dir, e->name, AT_REMOVEDIR) != 0) continue;
        }
        removed = true;
      }
    if (!removed) return;
  }
}

// The folders of `prefix` whose process is gone.
void sweep(const fs::path& tmp, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tmp, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix + "-", 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size() + 1, nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      fs::remove_all(e.path(), ec);
  }
}

}  // namespace

std::string makeTemporaryFolder(const std::string& prefix) {
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) throw Error("no folder for temporary files (TMPDIR): " + ec.message());
  {
    static std::mutex m;
    static std::set<std::string> swept;
    std::lock_guard lock(m);
    if (swept.insert(prefix).second) sweep(tmp, prefix);
  }
  std::string pattern = (tmp / (prefix + "-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw Error("cannot make a temporary folder in " + tmp.string() + ": " + std::strerror(errno));
  remember(pattern);
  return pattern;
}

void removeTemporaryFolder(const std::string& folder) {
  std::error_code ec;
  fs::remove_all(folder, ec);
  forget(folder);
}

void removeTemporaryFoldersNow() {
  const pid_t self = ::getpid();
  for (Slot& s : slots) {
    if (s.owner.load() != self) continue;
    const int dir = ::open(s.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir >= 0) {
      removeContents(dir, 0);
      ::close(dir);
    }
    ::rmdir(s.path);
  }
}

}  // namespace nncheck
