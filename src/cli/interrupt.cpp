#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include "core/deadline.h"
#include "core/temporary_folders.h"

namespace nncheck::cli {
namespace {

volatile sig_atomic_t requested = 0;  // the signal that asked to stop
pid_t installer = -1;                 // the process that says so (not its forked workers)
struct sigaction before[2];
constexpr int kSignals[2] = {SIGINT, SIGTERM};

// The signal ends this process as it would have, with nncheck's temporary folders removed.
void endBy(int signal) {
  removeTemporaryFoldersNow();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void onSignal(int signal) {
  if (requested) {  // the second time: at once
    endBy(signal);
    return;
  }
  requested = signal;
  requestInterrupt();  // what waits (an engine's run, its start-up) ends at its next look
  if (::getpid() == installer) {
    constexpr char kSaid[] =
        "\nnncheck: stopping: the case in progress is left, a finding being shrunk is finished, "
        "then what ran is reported (press Ctrl-C again to quit at once)\n";
    (void)!::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
  }
}

}  // namespace

StopOnSignals::StopOnSignals() {
  requested = 0;
  clearInterrupt();
  installer = ::getpid();
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // what is interrupted goes on; polls see EINTR and loop
  for (int i = 0; i < 2; ++i) ::sigaction(kSignals[i], &action, &before[i]);
}

StopOnSignals::~StopOnSignals() {
  for (int i = 0; i < 2; ++i) ::sigaction(kSignals[i], &before[i], nullptr);
}

void removeTemporariesOnSignals() {
  struct sigaction action {};
  action.sa_handler = endBy;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    // A signal the caller ignores (nohup) stays ignored.
    if (::sigaction(signal, nullptr, &now) == 0 && now.sa_handler != SIG_IGN)
      ::sigaction(signal, &action, nullptr);
  }
}

bool stopRequested() { return requested != 0; }
int stopSignal() { return requested; }

}  // namespace nncheck::cli
