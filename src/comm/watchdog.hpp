// The gradient all-reduce with a watchdog: a rank that died or hangs (a frozen node, a stuck file
// system) must not leave the others waiting forever. The all-reduce is non-blocking and polled by
// the main thread (MPI stays FUNNELED). When it has not completed after the timeout, rank 0 pings
// every rank; ranks still waiting in the all-reduce answer, and the job is aborted with the ranks
// that did not answer named (Horovod's stall inspector does a similar job). The other ranks wait
// a grace period longer before aborting on their own, which covers a dead rank 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace hpct {

class WatchedAllreduce {
 public:
  // timeout_seconds <= 0 disables the watchdog (plain blocking all-reduce, no arrival messages).
  WatchedAllreduce(const Comm& comm, double timeout_seconds);
  // In-place sum over ranks of data[0, n) at optimizer step `step`. Aborts the job on timeout.
  // T: float (gradients) or double (the step's control values: loss sum and flags).
  template <class T>
  void sum(T* data, std::size_t n, std::uint64_t step);

 private:
  static constexpr double kGraceSeconds = 5.0;
  void answer_pings();                    // ranks != 0, while waiting
  std::vector<int> unresponsive_ranks();  // rank 0, at the timeout
  [[noreturn]] void abort_job(std::uint64_t step);
  const Comm& comm_;
  double timeout_;
};

}  // namespace hpct
