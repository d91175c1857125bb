#include "core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nncheck/error.h"

namespace nncheck {

CheckedFile::CheckedFile(const std::filesystem::path& path, Links links, int64_t maxBytes) {
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (links == Links::Refuse ? O_NOFOLLOW : 0);
  fd_ = ::open(path.c_str(), flags);
  if (fd_ < 0) {
    const int err = errno;
    if (err == ENOENT) throw Error(path.string() + ": no such file");
    if (err == ELOOP && links == Links::Refuse)
      throw Error(path.string() + ": is a symbolic link, which nncheck does not follow here");
    throw Error(path.string() + ": cannot open for reading: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0)
    fail(path.string() + ": cannot read its size: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(path.string() + ": is a directory, expected a file");
  if (!S_ISREG(st.st_mode))
    fail(path.string() + ": not a regular file (a FIFO, a device or a socket)");
  size_ = st.st_size;
  if (size_ > maxBytes) {
    const std::string limit = maxBytes >= (1 << 20) ? std::to_string(maxBytes >> 20) + " MiB"
                                                    : std::to_string(maxBytes) + " bytes";
    fail(path.string() + ": " + std::to_string(size_) + " bytes, more than " +
         (maxBytes == kMaxFileBytes ? "nncheck's limit of " + limit + " per file"
                                    : "the " + limit + " such a file may take"));
  }
}

CheckedFile::~CheckedFile() { ::close(fd_); }

void CheckedFile::fail(const std::string& why) {
  ::close(fd_);
  throw Error(why);
}

std::string readFile(const std::filesystem::path& path, Links links, int64_t maxBytes) {
  const CheckedFile file(path, links, maxBytes);
  std::string bytes(static_cast<size_t>(file.size()), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(file.fd(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path.string() + ": read error: " + std::strerror(errno));
    if (n == 0) throw Error(path.string() + ": read error: the file shrank while read");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

namespace {
thread_local BulkWrite* openBulkWrite = nullptr;

// Opens `path` and syncs it with `sync` (fsync: the file or folder; syncfs: its file system).
void syncOpened(const std::filesystem::path& path, int (*sync)(int)) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open to sync: " + std::strerror(errno));
  const bool ok = sync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw Error(path.string() + ": cannot sync to disk: " + std::strerror(err));
}
}  // namespace

BulkWrite::BulkWrite(std::filesystem::path root)
    : root_(std::move(root)), outer_(std::exchange(openBulkWrite, this)) {}

BulkWrite::~BulkWrite() { openBulkWrite = outer_; }

void BulkWrite::commit() { syncOpened(root_, ::syncfs); }

void syncPath(const std::filesystem::path& path) {
  if (!openBulkWrite) syncOpened(path, ::fsync);  // else its commit() syncs
}

namespace {

// Writes all of `bytes` to `fd`; false, with errno set, when the system refuses (a full disk).
bool writeAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Where a write to `path` lands: through symbolic links, as a shell's `>` goes, to the file they
// name (which need not exist yet: a dangling link is written through too).
std::filesystem::path throughLinks(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit on a chain of links
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw Error(path.string() + ": cannot read the link: " + ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  throw Error(path.string() + ": too many levels of symbolic links");
}

}  // namespace

void writeFileAtomic(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  // The temporary's name is predictable: whatever a killed run or someone else left there (a
  // link to a file elsewhere) is removed, never written through, and the file made anew.
  ::unlink(tmp.c_str());
  // A file replaced keeps its permissions (a report someone made readable to all stays so).
  struct stat old {};
  const bool replacing = ::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(tmp.string() + ": cannot open for writing: " + std::strerror(errno));
  if (replacing) ::fchmod(fd, old.st_mode & 07777);
  // The data reaches the disk before the name does: a crash leaves the old file or the new one.
  const bool ok = writeAll(fd, bytes) && (openBulkWrite || ::fsync(fd) == 0);
  const int err = errno;
  ::close(fd);
  if (!ok) {
    std::filesystem::remove(tmp, ec);
    throw Error(tmp.string() + ": write failed: " + std::strerror(err));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();  // before the removal below reuses `ec`
    std::filesystem::remove(tmp, ec);
    throw Error(path.string() + ": cannot rename temporary file into place: " + why);
  }
  syncPath(path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path());
}

void checkOutputFile(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const fs::path target = throughLinks(path);
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st)) throw Error(path.string() + ": is a folder; name a file to write");
  if (fs::exists(st)) {
    if (::access(target.c_str(), W_OK) != 0)
      throw Error(path.string() + ": cannot be written: " + std::strerror(errno));
    if (!fs::is_regular_file(st)) return;  // a device or FIFO: written in place
  }
  // A regular file is written beside itself and renamed: its folder must take a new file.
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(folder, ec))
    throw Error(path.string() + ": no such folder " + folder.string());
  if (::access(folder.c_str(), W_OK) != 0)
    throw Error(path.string() + ": its folder " + folder.string() +
                " cannot be written: " + std::strerror(errno));
}

void writeOutputFile(const std::filesystem::path& path, const std::string& bytes) {
  namespace fs = std::filesystem;
  const fs::path target = throughLinks(path);
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st)) throw Error(path.string() + ": is a folder; name a file to write");
  if (!fs::exists(st) || fs::is_regular_file(st)) {
    writeFileAtomic(target, bytes);  // the file a link names is replaced, never the link
    return;
  }
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw Error(path.string() + ": cannot open for writing: " + std::strerror(errno));
  const bool ok = writeAll(fd, bytes);
  const int err = errno;
  ::close(fd);
  if (!ok) throw Error(path.string() + ": write failed: " + std::strerror(err));
}

}  // namespace nncheck
