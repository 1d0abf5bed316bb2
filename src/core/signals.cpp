// The stop-request flag set by SIGUSR1/SIGTERM, and the thread that receives them until a run loop
// polls them (see signals.hpp).
#include "core/signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>

#include "core/timer.hpp"

namespace hpct {

namespace {
// Set by a handler or the main thread's poll, read by the main thread: a lock-free atomic is both
// signal-safe and free of data races.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the stop flag is set inside a signal handler");
std::atomic<bool> g_quit{false};            // the receiving thread returns
std::atomic<bool> g_polled{false};          // the signals are blocked and stop_signal() takes them
StopSignalThread* g_stop_thread = nullptr;  // the program's, while it lives (main thread only)

extern "C" void on_stop_signal(int sig) { g_signal.store(sig); }

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGTERM);
  return set;
}

// Until a run loop polls them: each stop signal takes its course on this thread, as it would have
// without it (the default action ends the process; an ignored signal stays ignored).
void receive_stop_signals() {
  const sigset_t set = stop_set();
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (g_quit.load()) return;
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    raise(sig);
    pthread_sigmask(SIG_BLOCK, &one, nullptr);
  }
}

// A child of fork() (Open MPI starting a daemon) gets the signals back before it execs something
// that expects them.
extern "C" void unblock_in_child() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}
}  // namespace

StopSignalThread::StopSignalThread() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, &previous_);
  static const bool registered = pthread_atfork(nullptr, nullptr, unblock_in_child) == 0;
  (void)registered;
  g_quit.store(false);
  thread_ = std::thread(receive_stop_signals);
  g_stop_thread = this;
}

void StopSignalThread::stop_receiving() {
  if (!thread_.joinable()) return;
  g_quit.store(true);
  pthread_kill(thread_.native_handle(), SIGUSR1);  // blocked there: its sigwait takes it
  thread_.join();
}

StopSignalThread::~StopSignalThread() {
  stop_receiving();
  g_polled.store(false);
  g_stop_thread = nullptr;
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);  // no kernel runs any more
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // do not break MPI or file I/O calls in progress
  sigaction(SIGUSR1, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (g_stop_thread != nullptr) {
    // From now on the main thread takes them where it reads the flag: a signal that arrived before
    // a read is seen by it, as when the handler ran on the main thread at once.
    g_stop_thread->stop_receiving();
    g_polled.store(true);
  }
}

int stop_signal() {
  if (g_polled.load()) {
    const sigset_t set = stop_set();
    const timespec now{0, 0};
    const int sig = sigtimedwait(&set, nullptr, &now);  // a pending one, without waiting
    if (sig > 0) g_signal.store(sig);
  }
  return g_signal.load();
}

void clear_stop_signal() { g_signal.store(0); }

void raise_stop_signal(int sig) {
  kill(getpid(), sig);
  const Stopwatch waited;
  while (stop_signal() != sig && waited.seconds() < 10) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace hpct
