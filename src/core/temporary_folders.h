// nncheck's temporary folders (an isolated engine's processes', a worker's outside isolation):
// each named by the process that made it, <TMPDIR>/<prefix>-<pid>-XXXXXX, so that the next
// nncheck to make one removes those of processes that are gone; removed when done, and also when
// a signal ends this process (removeTemporaryFoldersNow(), from the signal's handler).
//
//   const std::string folder = makeTemporaryFolder("nncheck-engines");  // throws naming TMPDIR
//   ...
//   removeTemporaryFolder(folder);
#pragma once

#include <string>

namespace nncheck {

// A new empty folder, mode 0700; throws nncheck::Error naming where it could not be made. The
// first call for a prefix removes the folders of that prefix whose process is gone.
std::string makeTemporaryFolder(const std::string& prefix);

// Removes the folder and all in it, and forgets it.
void removeTemporaryFolder(const std::string& folder);

// Removes every temporary folder this process made and has not removed: for a handler of a
// signal that ends the process (async-signal-safe: system calls only, no allocation).
void removeTemporaryFoldersNow();

}  // namespace nncheck
