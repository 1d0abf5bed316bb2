// The gradient all-reduce with a watchdog: a rank that died or hangs (a frozen node, a stuck file
// system) must not leave the others waiting forever. The all-reduce is non-blocking and polled by
// the main thread (MPI stays FUNNELED). When it has not completed after the timeout, rank 0 pings
// every rank; ranks still waiting in the all-reduce answer, and the job is aborted with the ranks
// that did not answer named (Horovod's stall inspector does a similar job). The other ranks wait
// a grace period longer before aborting on their own, which covers a dead rank 0.
// Several all-reduces may be outstanding at once (the gradient buckets of comm/gradient_reducer.hpp
// and the control values): start() each, progress() while other work runs, then wait() for all of
// them under one watchdog. Device buffers given to stage_device_buffer() travel through pinned host
// memory when MPI cannot read GPU memory (comm/host_staging.hpp); the call sites do not change.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "comm/host_staging.hpp"

namespace hpct {

// The stall inspector, shared by this MPI watchdog and the NCCL one (comm/nccl_collective.hpp): at
// the timeout rank 0 pings every other rank over MPI; a rank still waiting in the collective answers,
// so the ranks that stay silent are the ones that never arrived (dead, frozen, or stuck elsewhere).
// Each inspection is a round with its own token, so a late answer to an earlier round is discarded.
namespace arrival {
// Ranks != 0, while waiting: answers rank 0's pending ping, if any.
void answer_pings(const Comm& comm);
// Rank 0, at the timeout: pings every rank and returns those that did not answer within `grace` s.
std::vector<int> silent_ranks(const Comm& comm, double grace);
// Rank 0, before aborting: tells `ranks` (the ones that answered) to abort their side too.
void tell_to_abort(const Comm& comm, const std::vector<int>& ranks);
// Ranks != 0, while waiting: true once rank 0 said to abort.
bool told_to_abort(const Comm& comm);
// "1, 3" ("?" for none).
std::string list(const std::vector<int>& ranks);
}  // namespace arrival

class WatchedAllreduce {
 public:
  static constexpr double kGraceSeconds = 5.0;  // the other ranks' wait beyond rank 0's timeout
  // timeout_seconds <= 0 disables the watchdog (plain blocking all-reduce, no arrival messages).
  // force_staging: stage device buffers even with a CUDA-aware MPI (tests).
  WatchedAllreduce(const Comm& comm, double timeout_seconds, bool force_staging = false);
  // In-place sum over ranks of data[0, n) at optimizer step `step`. Aborts the job on timeout.
  // T: float (gradients) or double (the step's control values: loss sum and flags).
  template <class T>
  void sum(T* data, std::size_t n, std::uint64_t step);
  // In-place maximum over ranks, under the same watchdog (GBDT's gradient ranges). T: double.
  template <class T>
  void max(T* data, std::size_t n, std::uint64_t step);
  // How the messages name a collective and its counter: "the gradient all-reduce of step" (the
  // default) or, for trees, "the histogram all-reduce of round".
  void describe(const char* what) { what_ = what; }

  // Room for this many outstanding requests, so start() never allocates during a step.
  void reserve(std::size_t max_outstanding) {
    requests_.reserve(max_outstanding);
    staging_.reserve(max_outstanding + 1);  // a reduce-scatter stages two buffers
  }
  // Set-up: collectives on (parts of) the device buffer [data, data + bytes) go through a pinned host
  // twin when MPI is not CUDA-aware (a no-op otherwise, and on host builds).
  void stage_device_buffer(void* data, std::size_t bytes) { staging_.add(data, bytes); }
  bool staging() const { return staging_.active(); }
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
  // Host buffers only (the hierarchical all-reduce, comm/hierarchical_allreduce.hpp): every rank's
  // send[0, n) into recv[r * n, + n) on `root` (MPI_Igather; recv is ignored elsewhere), and root's
  // data[0, n) to every rank (MPI_Ibcast).
  void start_gather(const float* send, float* recv, std::size_t n, int root);
  void start_broadcast(float* data, std::size_t n, int root);
  // Drives the outstanding requests without blocking (MPI_Testall); returns true when none is left.
  bool progress();
  // Completes every outstanding request of optimizer step `step`, with the watchdog (a plain
  // MPI_Waitall when it is off). Aborts the job on timeout.
  void wait(std::uint64_t step);
  std::size_t outstanding() const { return requests_.size(); }
  int ranks() const { return comm_.size(); }

 private:
  [[noreturn]] void abort_job(std::uint64_t step);
  template <class T>
  void reduce(T* data, std::size_t n, std::uint64_t step, MPI_Op op);
  template <class T>
  void start_op(T* data, std::size_t n, MPI_Op op);
  const char* what_ = "the gradient all-reduce of step";
  const Comm& comm_;
  double timeout_;
  std::vector<MPI_Request> requests_;  // outstanding; completed ones are MPI_REQUEST_NULL
  HostStaging staging_;
};

}  // namespace hpct
