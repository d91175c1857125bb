// Ctrl-C (SIGINT) and SIGTERM during long work: the first asks the work to stop (what waits on an
// engine or its start-up ends at once: core/deadline.h's interrupt) and report what ran; a second
// ends the process at once, as the signal does. Whichever signal ends the process, nncheck's
// temporary folders go with it (removeTemporariesOnSignals, for every command).
//
//   StopOnSignals signals;   // while it lives
//   options.stop = [] { return stopRequested(); };
//   ...
//   if (stopRequested()) return 128 + stopSignal();
#pragma once

namespace nncheck::cli {

class StopOnSignals {
 public:
  StopOnSignals();   // installs the handlers (processes forked meanwhile keep them)
  ~StopOnSignals();  // restores the ones before
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};

// For the whole program: SIGINT, SIGTERM and SIGHUP end it as they would, after removing its
// temporary folders (core/temporary_folders.h).
void removeTemporariesOnSignals();

bool stopRequested();
int stopSignal();  // the signal that asked to stop, or 0

}  // namespace nncheck::cli
