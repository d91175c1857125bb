// The processes an engine starts, held to what they may do: each ends with whoever started it,
// whatever it started ends with it (its process group, its descendants, and the orphans they
// leave, which come to the nearest process that reaps them), and each holds at most the memory
// limit, enforced by the kernel.
//
//   if (pid == 0) { ...; limitMemoryOfProgram(memoryLimit()); exec(...); }  // a forked child
//   killProcessTree(worker);                                      // it and all below it
//   const std::optional<int> status = waitForExit(pid, Clock::now() + 2s);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nncheck {

// The processes below `pid`: its children, theirs, and so on (read from /proc; empty where
// /proc does not say).
std::vector<pid_t> descendantsOf(pid_t pid);

// Kills `pid`, its process group when it leads one, and every process below it with SIGKILL,
// rounds over until none is left below (one that forked meanwhile is caught in the next round).
// Does not wait for `pid`: that is its parent's (waitForExit).
void killProcessTree(pid_t pid);

// Kills every process below this one (killProcessTree of each child) and reaps those of its
// children that are no one else's to wait for (orphans this process was given as a subreaper):
// what an engine's process does before it ends.
void killDescendantsOfThisProcess();

// Makes this process the parent of the orphans its descendants leave (PR_SET_CHILD_SUBREAPER),
// so that a process a worker started and left is still below it, and killed with it.
void adoptOrphans();

// The child's exit status once it has exited, waiting at most until `deadline`; nullopt when it
// is still running then (it is left unreaped).
std::optional<int> waitForExit(pid_t child, std::chrono::steady_clock::time_point deadline);

// Whether the child has exited (without reaping it, so that its parent still reads its status);
// false for a process that is no child of this one.
bool hasExited(pid_t child);

// Whether the child exits by `deadline`, waiting without reaping it: its process group and its
// pid still name it, for killProcessTree, until waitForExit.
bool exitsBy(pid_t child, std::chrono::steady_clock::time_point deadline);

// Limits this process's data (what it allocates: heap and private writable mappings) to
// `bytes` more than it holds now, enforced by the kernel (RLIMIT_DATA, soft and hard), inherited
// by what it starts; an allocation past it fails (MemoryError, std::bad_alloc). For a forked
// engine's process, which holds its parent's pages. Async-signal-safe.
void limitMemoryFromNow(int64_t bytes);

// The same for the program a forked child is about to exec, which starts with nothing: `bytes`
// in all. Call it last before exec (an allocation after it may fail). Async-signal-safe.
void limitMemoryOfProgram(int64_t bytes);

// Whether an engine's error message says an allocation failed: what a run past limitMemory's
// limit reports (MemoryError, std::bad_alloc, "Cannot allocate memory", ...).
bool saysOutOfMemory(const std::string& message);

}  // namespace nncheck
