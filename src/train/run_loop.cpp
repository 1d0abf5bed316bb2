// The run loop's shared parts: checkpoint write-and-agree, stop agreement, stop line (see run_loop.hpp).
#include "train/run_loop.hpp"

#include <csignal>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/signals.hpp"
#include "core/trace.hpp"

namespace hpct {

std::string write_checkpoint_agreed(const Comm& comm, const std::function<std::string()>& write) {
  std::string path, err;
  if (comm.rank() == 0) {
    try {
      path = write();
    } catch (const std::exception& e) {
      err = std::string("checkpoint write failed: ") + e.what();
    }
  }
  // Every rank holds rank 0's verdict, so the agreed message is its own (no "rank 0:" prefix).
  comm.broadcast(err, 0);
  comm.agree(err, ExitCode::failure);
  comm.broadcast(path, 0);
  return path;
}

RoundFlags RunLoop::local_flags() const {
  return RoundFlags{polls_stop_ && stop_signal() != 0, cadence_.time_due_local(comm_.rank())};
}

RoundFlags RunLoop::agree_flags(RoundFlags local, WatchedAllreduce& agreement, std::uint64_t round) const {
  double flags[2] = {local.stop ? 1.0 : 0.0, local.time_due ? 1.0 : 0.0};
  agreement.sum(flags, 2, round);  // watched: a frozen rank is named
  return RoundFlags{flags[0] > 0, flags[1] > 0};
}

bool RunLoop::checkpoint_due_after_pass(std::uint64_t pass, std::uint64_t rounds, bool last_pass) const {
  if (!cadence_.checkpoints()) return false;  // the same on every rank: no clock to agree
  const bool time_due = cadence_.time_elapsed(comm_.max(cadence_.seconds_since_checkpoint()));
  return cadence_.after_epoch(pass, rounds, time_due, last_pass);
}

std::string RunLoop::write(const std::function<std::string()>& write) {
  last_ = write_checkpoint_agreed(comm_, write);
  return last_;
}

std::string RunLoop::checkpoint(const std::function<std::string()>& write_file) {
  write(write_file);
  if (log_) log_("  checkpoint " + last_);
  else Log::info("  checkpoint " + last_);
  cadence_.checkpoint_written();
  trace::write();  // a job killed later keeps its timeline up to here
  return last_;
}

int RunLoop::stop_signal_seen() {
  const int sig = stop_signal();
  return sig != 0 ? sig : SIGUSR1;  // another rank got it
}

int RunLoop::stopped(int signal, const std::string& where, const std::string& last_checkpoint) {
  Log::info(strf("Stopped by signal %d %s%s; exit code %d asks the job script to requeue", signal, where.c_str(),
                 last_checkpoint.empty() ? " (no checkpoint_dir: nothing saved)"
                                         : (": checkpoint " + last_checkpoint).c_str(),
                 static_cast<int>(ExitCode::requeue)));
  return static_cast<int>(ExitCode::requeue);
}

}  // namespace hpct
