#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

namespace nncheck::cli {
namespace {

volatile sig_atomic_t requested = 0;  // the signal that asked to stop
pid_t installer = -1;                 // the process that says so (not its forked workers)
struct sigaction before[2];
constexpr int kSignals[2] = {SIGINT, SIGTERM};

void onSignal(int signal) {
  if (requested) {  // the second time: as the signal would have, at once
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  requested = signal;
  if (::getpid() == installer) {
    constexpr char kSaid[] =
        "\nnncheck: stopping after the case in progress, then reporting what ran (press Ctrl-C "
        "again to quit at once)\n";
    (void)!::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
  }
}

}  // namespace

StopOnSignals::StopOnSignals() {
  requested = 0;
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

bool stopRequested() { return requested != 0; }
int stopSignal() { return requested; }

}  // namespace nncheck::cli
