// The guard against hangs: heartbeat, progress board, stop handlers, the tools' option (see run_guard.hpp).
#include "comm/run_guard.hpp"

#include <cstdio>

#include "comm/watchdog.hpp"
#include "core/cli_number.hpp"
#include "core/error.hpp"
#include "core/signals.hpp"

namespace hpct {

double heartbeat_timeout(double watchdog_timeout) {
  static_assert(WatchedAllreduce::kGraceSeconds > ProgressBoard::kSilentSeconds,
                "a peer frozen when this rank last progressed must be silent long enough to be named");
  return watchdog_timeout > 0 ? 2.0 * watchdog_timeout + WatchedAllreduce::kGraceSeconds : 0.0;
}

namespace {
RunGuard* current_guard = nullptr;  // main thread only
}  // namespace

RunGuard::RunGuard(const Comm& comm, double watchdog_timeout, StopSignals signals)
    : board_(comm), heartbeat_(heartbeat_timeout(watchdog_timeout), comm.rank()), outer_(current_guard) {
  if (signals == StopSignals::handled) install_stop_handlers();
  heartbeat_.set_peers(&board_);
  current_guard = this;
}

RunGuard::~RunGuard() {
  if (current_guard == this) current_guard = outer_;
}

RunGuard* RunGuard::current() { return current_guard; }

ProgramGuard::ProgramGuard(const Comm& comm, double watchdog_timeout) : guard_(RunGuard::current()) {
  if (guard_ == nullptr) {
    own_ = std::make_unique<RunGuard>(comm, watchdog_timeout);
    guard_ = own_.get();
  }
}

double take_watchdog_timeout(int& argc, char** argv) {
  static const std::string kOption = "--watchdog-timeout";
  double timeout = kDefaultWatchdogTimeout;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (argv[i] != kOption) {
      argv[kept++] = argv[i];
      continue;
    }
    if (i + 1 >= argc) throw Error(kOption + " needs a value (seconds; 0: off)", ExitCode::bad_input);
    timeout = cli_real(kOption, argv[++i]);  // finite
    if (timeout < 0)
      throw Error(kOption + " " + argv[i] + ": must be a number of seconds >= 0 (0: off)", ExitCode::bad_input);
  }
  argv[kept] = nullptr;  // argv[argc] is null, as main's was (kept <= argc)
  argc = kept;
  return timeout;
}

bool take_watchdog_timeout(const char* tool, int& argc, char** argv, double& timeout) {
  try {
    timeout = take_watchdog_timeout(argc, argv);
    return true;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return false;
  }
}

}  // namespace hpct
