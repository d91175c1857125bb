// Where this process works when it is an isolated engine's process (nncheck/isolation.h): its own
// empty folder, removed when the process is gone. A worker the engine starts keeps its files and
// caches in a folder inside it, so that they go with it whatever ends it.
//
//   if (const char* folder = engineProcessFolder()) ...   // else: not isolated; use TMPDIR
#pragma once

namespace nncheck {

// The folder, or null outside an isolated engine's process.
const char* engineProcessFolder();

}  // namespace nncheck
