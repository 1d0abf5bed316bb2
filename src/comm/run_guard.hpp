// A program's guard against hangs outside the watched collectives: the backstop heartbeat
// (core/heartbeat.hpp) with the node's progress board that names a rank that stopped
// (comm/progress_board.hpp), and, in a program whose loop polls them, the SIGUSR1/SIGTERM stop
// handlers. `train` keeps one from before its data is opened (its run loops use it:
// train/run_loop.hpp), and so does every tool that runs on several ranks (Note [the tools' guard]).
#pragma once

#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "comm/progress_board.hpp"
#include "core/heartbeat.hpp"

namespace hpct {

// Note [heartbeat after the watchdog]: a stall inside a watched collective is the watchdog's to
// report, since only its pings reach ranks on other nodes; the heartbeat must not end the rank
// first. Rank 0's watchdog decides at watchdog_timeout + kGraceSeconds / 2, the others' at
// watchdog_timeout + kGraceSeconds, and the progress board names a frozen peer only once its ticks
// are ProgressBoard::kSilentSeconds old. Twice the timeout alone came before these for timeouts of
// a few seconds (which message a frozen rank got was then a race); twice the timeout plus the grace
// comes after them at every timeout.
double heartbeat_timeout(double watchdog_timeout);

// What the guard does with SIGUSR1 and SIGTERM: a program whose loop polls stop_signal() has them
// set the stop flag (install_stop_handlers); a tool, which polls none, leaves them their default
// action (SIGTERM ends it, as a job's time limit or a failed peer's launcher means it to).
enum class StopSignals { handled, left_alone };

// The all-reduce watchdog names missing ranks inside a collective; the heartbeat covers every other
// place a dead peer could block us (checkpoint agreement, validation, data loading, a tool's reads
// and writes), and the node's progress board lets it name the rank that stopped.
class RunGuard {
 public:
  // Collective. watchdog_timeout <= 0: no heartbeat thread; else heartbeat_timeout(watchdog_timeout).
  RunGuard(const Comm& comm, double watchdog_timeout, StopSignals signals = StopSignals::handled);
  ~RunGuard();
  RunGuard(const RunGuard&) = delete;
  RunGuard& operator=(const RunGuard&) = delete;
  Heartbeat& heartbeat() { return heartbeat_; }
  // The guard alive in this process (the newest), or null.
  static RunGuard* current();

 private:
  ProgressBoard board_;
  Heartbeat heartbeat_;
  RunGuard* outer_ = nullptr;
};

// Note [guard before the open]: `train` makes its RunGuard before anything opens data (driver.cpp),
// so that the open's beats (Note [beats from the open]) keep a long open alive and a stalled one is
// ended, naming its file. The run loops then use that guard; a program that made none (a test, a
// library) gets one of their own, as before. Collective, like RunGuard (every rank of a program
// takes the same path).
class ProgramGuard {
 public:
  ProgramGuard(const Comm& comm, double watchdog_timeout);
  Heartbeat& heartbeat() { return guard_->heartbeat(); }

 private:
  std::unique_ptr<RunGuard> own_;
  RunGuard* guard_;
};

// Note [the tools' guard]: the tools that run under srun on several ranks (predict, sample, wxeval,
// cape_predict, cape_eval, smart_eval) wait in collectives too, so a rank stuck in a library call
// (HDF5 looping on a damaged file) or dead on its node would hang the others until the job's time
// limit. Each keeps a RunGuard (StopSignals::left_alone) from before it opens its data to its last
// write, its timeout from `--watchdog-timeout S` (train's watchdog_timeout: default 600, 0 off), and
// beats it where it makes progress (per file opened, per batch, sample or rollout, per file
// written): the message names the rank and that place, as train's do. Code shared with `train`
// (the families' predict loops, the sampler's chunks, the row outputs) beats through
// Heartbeat::beat_current, as the readers do (Note [beats from the open]): nothing where no guard
// is alive (a library), and in `train` progress like any other. SIGUSR1/SIGTERM keep their default
// action (StopSignals::left_alone): a tool has no checkpoint to write before it ends.
constexpr double kDefaultWatchdogTimeout = 600.0;  // train's watchdog_timeout default (train/config.cpp)
// Takes every `--watchdog-timeout S` out of the command line (argc shrinks; the tool reads the rest
// as before) and returns S, the last one given (kDefaultWatchdogTimeout without one). Throws
// Error(bad_input) naming the option for a value that is not a number of seconds >= 0.
double take_watchdog_timeout(int& argc, char** argv);
// The same for a tool that reads its command line before its run_tool (core/error.hpp) and reports
// its own mistakes: "TOOL: <why>" on stderr and false on a bad value (the tool then exits with 2).
bool take_watchdog_timeout(const char* tool, int& argc, char** argv, double& timeout);

}  // namespace hpct
