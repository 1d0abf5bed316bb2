// The stop-request flag set by SIGUSR1/SIGTERM (see signals.hpp).
#include "core/signals.hpp"

#include <csignal>

namespace hpct {

namespace {
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int sig) { g_signal = sig; }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // do not break MPI or file I/O calls in progress
  sigaction(SIGUSR1, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_signal() { return static_cast<int>(g_signal); }
void clear_stop_signal() { g_signal = 0; }

}  // namespace hpct
