#include "backends/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "backends/process_tree.h"
#include "core/deadline.h"
#include "nncheck/error.h"

namespace nncheck::wire {

namespace {
// How often a long wait looks at the watched process and the limits in force.
constexpr std::chrono::milliseconds kLookEvery{100};

template <class T>
void putRaw(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// What one process holds, by `measure` of its /proc folder, and its descendants the same way.
int64_t heldByTree(pid_t pid, int depth, int64_t (*measure)(const std::string& proc)) {
  const std::string proc = "/proc/" + std::to_string(pid);
  int64_t bytes = measure(proc);
  if (depth >= 8) return bytes;  // an engine's worker's worker is as deep as it goes
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(proc + "/task", ec)) {
    std::ifstream children(task.path() / "children");
    for (pid_t child; children >> child;) bytes += heldByTree(child, depth + 1, measure);
  }
  return bytes;
}

int64_t privateDirty(const std::string& proc) {
  int64_t bytes = 0;
  std::ifstream rollup(proc + "/smaps_rollup");
  for (std::string key; rollup >> key;) {
    int64_t kib = 0;
    if (key == "Private_Dirty:" && rollup >> kib) bytes += kib << 10;
    rollup.ignore(1 << 20, '\n');
  }
  return bytes;
}

// Resident pages, which private dirty ones are among: read in constant time, where the kernel
// walks every page table for smaps_rollup (62% of a TVM campaign's own CPU time went to it,
// ten times a second, on a worker that maps TVM and LLVM).
int64_t resident(const std::string& proc) {
  static const int64_t page = ::sysconf(_SC_PAGESIZE);
  std::ifstream statm(proc + "/statm");
  int64_t size = 0, pages = 0;
  statm >> size >> pages;
  return pages * page;
}
}  // namespace

bool writeAll(int fd, std::string_view bytes) {
  size_t done = 0;
  bool socket = true;
  while (done < bytes.size()) {
    ssize_t n = socket ? ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL)
                       : ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == ENOTSOCK && socket) {
      socket = false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void putU32(std::string& out, uint32_t v) { putRaw(out, v); }
void putI32(std::string& out, int32_t v) { putRaw(out, v); }
void putU64(std::string& out, uint64_t v) { putRaw(out, v); }
void putI64(std::string& out, int64_t v) { putRaw(out, v); }

void putBytes(std::string& out, std::string_view bytes) {
  putU64(out, bytes.size());
  out += bytes;
}

void Message::own(std::string s) {
  owned_.push_back(std::move(s));
  parts_.emplace_back(owned_.back());
}

void Message::view(const void* data, size_t n) {
  parts_.emplace_back(static_cast<const char*>(data), n);
}

uint64_t Message::size() const {
  uint64_t n = 0;
  for (std::string_view p : parts_) n += p.size();
  return n;
}

bool Message::send(int fd) const {
  std::string head;
  putU64(head, size());
  if (!writeAll(fd, head)) return false;
  for (std::string_view p : parts_)
    if (!writeAll(fd, p)) return false;
  return true;
}

bool sendFrame(int fd, std::string_view body) {
  Message m;
  m.view(body.data(), body.size());
  return m.send(fd);
}

int64_t memoryHeldBy(pid_t pid) { return heldByTree(pid, 0, privateDirty); }

int64_t residentIn(pid_t pid) { return heldByTree(pid, 0, resident); }

Ending readExactly(int fd, char* to, size_t n, Clock::time_point deadline,
                   const ProcessWatch* watch, int64_t& held) {
  while (n > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (deadline == Clock::time_point::max()) left = std::chrono::hours(1);
    if (left.count() <= 0) return Ending::Late;
    const bool looks = watch || limitInForce();
    if (looks) left = std::min(left, kLookEvery);
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      checkDeadline();  // an interrupt (a signal's handler asks) ends the wait at once
      continue;
    }
    if (ready == 0) {
      if (looks) checkDeadline();
      // (What is resident bounds what is held: counted exactly only past the limit.)
      if (watch && watch->limit > 0 && residentIn(watch->pid) > watch->limit &&
          (held = memoryHeldBy(watch->pid)) > watch->limit)
        return Ending::OverMemory;
      if (watch && hasExited(watch->pid)) {
        // What it sent before it ended (it may have, since the poll) is read first.
        pollfd now{fd, POLLIN, 0};
        if (::poll(&now, 1, 0) == 1) continue;
        return Ending::Gone;
      }
      continue;
    }
    const ssize_t k = ::read(fd, to, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return Ending::Gone;  // the other side is done or dead
    to += k;
    n -= static_cast<size_t>(k);
  }
  return Ending::Whole;
}

Length readLength(int fd, Clock::time_point deadline, uint64_t maxBytes,
                  const ProcessWatch* watch) {
  Length l;
  l.ending = readExactly(fd, reinterpret_cast<char*>(&l.value), 8, deadline, watch, l.bytes);
  if (l.ending == Ending::Whole && l.value > maxBytes) {
    l.ending = Ending::TooLarge;
    l.bytes = static_cast<int64_t>(std::min<uint64_t>(l.value, INT64_MAX));
  }
  return l;
}

Frame readFrame(int fd, Clock::time_point deadline, uint64_t maxBytes, const ProcessWatch* watch) {
  const Length l = readLength(fd, deadline, maxBytes, watch);
  Frame f{l.ending, "", l.bytes};
  if (f.ending != Ending::Whole) return f;
  f.body.resize(l.value);
  f.ending = readExactly(fd, f.body.data(), l.value, deadline, watch, f.bytes);
  if (f.ending != Ending::Whole) f.body.clear();
  return f;
}

Reader::Reader(std::string_view body, std::string who)
    : body_(body), left_(body.size()), who_(std::move(who)) {}

Reader::Reader(int fd, uint64_t length, Clock::time_point deadline, const ProcessWatch* watch,
               std::string who)
    : fd_(fd), left_(length), deadline_(deadline), watch_(watch), who_(std::move(who)) {}

std::string_view Reader::take(size_t n) {
  claim(n);
  if (fd_ < 0) return body_.substr(body_.size() - left_ - n, n);
  scratch_.resize(n);
  fill(scratch_.data(), n);
  return scratch_;
}

void Reader::into(char* to, size_t n) {
  if (fd_ < 0) {
    const std::string_view s = take(n);
    if (n) std::memcpy(to, s.data(), n);
    return;
  }
  claim(n);
  fill(to, n);
}

std::string_view Reader::bytes() { return take(get<uint64_t>()); }

void Reader::claim(uint64_t n) {
  if (n > left_) throw Error(who_ + ": a message is cut short (it holds less than it says)");
  left_ -= n;
}

void Reader::fill(char* to, size_t n) {
  int64_t held = 0;
  if (const Ending e = readExactly(fd_, to, n, deadline_, watch_, held); e != Ending::Whole)
    throw CutShort{e};
}

void putTensor(Message& m, const std::string& name, const Tensor& t) {
  std::string head;
  putBytes(head, name);
  putI32(head, static_cast<int32_t>(t.dtype()));
  putU32(head, static_cast<uint32_t>(t.shape().size()));
  for (int64_t d : t.shape()) putI64(head, d);
  if (t.dtype() == DType::String) {
    for (const std::string& s : t.strings()) putBytes(head, s);
    m.own(std::move(head));
    return;
  }
  putU64(head, t.bytes().size());
  m.own(std::move(head));
  m.view(t.bytes().data(), t.bytes().size());
}

Tensor takeTensor(Reader& r, std::string& name) {
  name = std::string(r.bytes());
  const std::string what = r.who() + ": tensor '" + name + "'";
  const int32_t code = r.get<int32_t>();
  if (!isKnownDType(code) || code == 0)
    throw Error(what + " has an unknown data type " + std::to_string(code));
  const uint32_t rank = r.get<uint32_t>();
  if (rank > 64) throw Error(what + " has rank " + std::to_string(rank));
  Shape shape;
  for (uint32_t i = 0; i < rank; ++i) {
    shape.push_back(r.get<int64_t>());
    if (shape.back() < 0) throw Error(what + " has a negative dim");
  }
  const DType dtype = static_cast<DType>(code);
  // Checked before anything is allocated: every element takes at least a byte of the body.
  int64_t count = 0;
  try {
    count = elementCount(shape);
  } catch (const std::exception& e) {
    throw Error(what + ": " + e.what());
  }
  if (static_cast<uint64_t>(count) > r.left())
    throw Error(what + " claims " + std::to_string(count) +
                " elements, more than its message holds");
  Tensor t(dtype, shape);
  if (dtype == DType::String) {
    for (std::string& s : t.strings()) s = std::string(r.bytes());
    return t;
  }
  const uint64_t n = r.get<uint64_t>();
  if (n != t.bytes().size())
    throw Error(what + " holds " + std::to_string(n) + " bytes for " + shapeToString(shape) +
                " of " + std::string(dtypeName(dtype)));
  r.into(reinterpret_cast<char*>(t.bytes().data()), n);
  return t;
}

}  // namespace nncheck::wire
