// Ctrl-C (SIGINT) and SIGTERM during long work: the first asks the work to stop after what is in
// progress and report what ran; a second ends the process at once, as the signal does.
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

bool stopRequested();
int stopSignal();  // the signal that asked to stop, or 0

}  // namespace nncheck::cli
