// The gradient all-reduce with a watchdog: a rank that died or hangs (a frozen node, a stuck file
// system) must not leave the others waiting forever. The all-reduce is non-blocking and polled by
// the main thread (MPI stays FUNNELED). When it has not completed after the timeout, rank 0 pings
// every rank; ranks still waiting in the all-reduce answer, and the job is aborted with the ranks
// that did not answer named (Horovod's stall inspector does a similar job). The other ranks wait
// a grace period longer before aborting on their own, which covers a dead rank 0.
// Several all-reduces may be outstanding at once (the gradient buckets of comm/gradient_reducer.hpp
// and the control values): start() each, progress() while other work runs, then wait() for all of
// them under one watchdog.
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

  // Room for this many outstanding requests, so start() never allocates during a step.
  void reserve(std::size_t max_outstanding) { requests_.reserve(max_outstanding); }
  // Starts an in-place sum over ranks of data[0, n) (MPI_Iallreduce); the buffer must not be read
  // or written until wait() returns. Every rank must start the same sequence of sums.
  template <class T>
  void start(T* data, std::size_t n);
  // Optimizer sharding (ZeRO stage 1): starts the sum over ranks of send[0, sum(counts)) of which
  // this rank receives its part, counts[rank] values, into recv (MPI_Ireduce_scatter); and starts
  // the gather of every rank's part data[displs[r], + counts[r]) into data on all ranks, in place
  // (MPI_Iallgatherv). The count arrays must stay alive until wait() returns.
  void start_reduce_scatter(const float* send, float* recv, const int* counts);
  void start_allgather(float* data, const int* counts, const int* displs);
  // Drives the outstanding requests without blocking (MPI_Testall); returns true when none is left.
  bool progress();
  // Completes every outstanding request of optimizer step `step`, with the watchdog (a plain
  // MPI_Waitall when it is off). Aborts the job on timeout.
  void wait(std::uint64_t step);
  std::size_t outstanding() const { return requests_.size(); }

 private:
  static constexpr double kGraceSeconds = 5.0;
  void answer_pings();                    // ranks != 0, while waiting
  std::vector<int> unresponsive_ranks();  // rank 0, at the timeout
  [[noreturn]] void abort_job(std::uint64_t step);
  const Comm& comm_;
  double timeout_;
  std::vector<MPI_Request> requests_;  // outstanding; completed ones are MPI_REQUEST_NULL
};

}  // namespace hpct
