// The run loop: what every run shares, written once. A network's optimizer steps (and an in-situ
// session's, through the same epochs: epoch_steps.hpp), GBDT's boosting rounds and an ensemble
// member's (pass_loop.hpp) are the work of one round, epochs, sessions and members the passes; around each round and pass the loop
// owns the checkpoint cadence (cadence.hpp), the stop agreement, the write-and-agree of a
// checkpoint, the heartbeat, and at the end the "stopped by signal" line. A program that runs the
// loop (not a library embedding it) also keeps the signal handlers and the heartbeat (RunGuard,
// comm/run_guard.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "comm/comm.hpp"
#include "comm/run_guard.hpp"
#include "comm/watchdog.hpp"
#include "core/heartbeat.hpp"
#include "train/cadence.hpp"

namespace hpct {

// Note [rank 0 writes, all agree]: a checkpoint's state is the same on every rank (replicated, or
// gathered on rank 0 when the optimizer is sharded), so rank 0 alone writes it. The others wait
// for its verdict: a failed write stops every rank with the same message, and the previous
// checkpoint stays intact (files are written to a temporary name and renamed).
// Collective: rank 0 runs `write`, which returns the path written; every rank gets that path, or
// every rank throws the same Error ("checkpoint write failed: <why>", ExitCode::failure).
std::string write_checkpoint_agreed(const Comm& comm, const std::function<std::string()>& write);

// The flags each rank brings to the stop agreement of a round, reduced (max or sum) over ranks.
struct RoundFlags {
  bool stop = false;      // a stop signal arrived (on some rank, once agreed)
  bool time_due = false;  // rank 0's clock says a minutes checkpoint is due
};

class RunLoop {
 public:
  RunLoop(const Comm& comm, const Cadence& cadence) : comm_(comm), cadence_(cadence) {}
  // Beaten at every round and phase; none: no heartbeat.
  void set_heartbeat(Heartbeat* heartbeat) { heartbeat_ = heartbeat; }
  // Where the checkpoint lines go (default: Log::info). A library embedded in another program logs
  // to its own sink.
  void set_log(std::function<void(const std::string&)> log) { log_ = std::move(log); }
  // Whether the stop signal counts (default). A library embedded in another program (the in-situ
  // sessions) installs no handlers and leaves signals to that program: its rounds never stop.
  void set_polls_stop_signal(bool polls) { polls_stop_ = polls; }
  void beat(const char* where) const {
    if (heartbeat_) heartbeat_->beat(where);
  }
  const Cadence& cadence() const { return cadence_; }
  bool checkpoints() const { return cadence_.checkpoints(); }

  // This rank's flags before the agreement (the caller reduces them with the round's own
  // collectives, or with agree_flags).
  RoundFlags local_flags() const;
  // The agreed flags over every rank: one watched two-value all-reduce.
  RoundFlags agree_flags(RoundFlags local, WatchedAllreduce& agreement, std::uint64_t round) const;
  // After round `rounds` (1-based count of rounds done) inside a pass (an epoch): whether the
  // cadence or the agreed flags ask for a checkpoint now.
  bool checkpoint_due(std::uint64_t rounds, const RoundFlags& agreed, bool last_of_pass) const {
    return cadence_.checkpoints() && (agreed.stop || cadence_.after_step(rounds, agreed.time_due, last_of_pass));
  }

  // At the end of pass `pass` (0-based; an epoch) after `rounds` rounds in all: whether the cadence
  // asks for a checkpoint. Collective when the loop checkpoints: the minutes clock is agreed (max
  // over ranks).
  bool checkpoint_due_after_pass(std::uint64_t pass, std::uint64_t rounds, bool last_pass) const;
  // The same when the pass's end has its own stop agreement (`agreed`, the clock's test with it).
  bool checkpoint_due_after_pass(std::uint64_t pass, std::uint64_t rounds, const RoundFlags& agreed,
                                 bool last_pass) const {
    return cadence_.checkpoints() &&
           (agreed.stop || cadence_.after_epoch(pass, rounds, agreed.time_due, last_pass));
  }

  // Collective: writes a checkpoint through write_checkpoint_agreed, logs its path, keeps the
  // timeline written so far (a job killed later keeps it) and restarts the minutes clock.
  std::string checkpoint(const std::function<std::string()>& write);
  // Collective: a checkpoint the caller asked for outside the cadence (the in-situ library's
  // save): the same write-and-agree, without the log line or the clock restart.
  std::string write(const std::function<std::string()>& write);
  // The newest checkpoint this loop wrote ("" when none).
  const std::string& last_checkpoint() const { return last_; }

  // The signal that stopped the run: this rank's, or SIGUSR1 when another rank got it.
  static int stop_signal_seen();
  // Logs "Stopped by signal S <where>: checkpoint P; exit code ..." (rank 0) and returns the
  // requeue exit code. `where`: "at step 12", "after round 40".
  static int stopped(int signal, const std::string& where, const std::string& last_checkpoint);

 private:
  const Comm& comm_;
  Cadence cadence_;
  Heartbeat* heartbeat_ = nullptr;
  std::function<void(const std::string&)> log_;
  bool polls_stop_ = true;
  std::string last_;
};

}  // namespace hpct
