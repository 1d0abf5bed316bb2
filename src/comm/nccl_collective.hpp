// The gradient all-reduce over NCCL, on GPU builds (comm_backend nccl): the only file that knows
// NCCL. Rank 0 creates the NCCL unique id, MPI broadcasts it (the control channel stays MPI), every
// rank joins with the GPU Kokkos chose for it, and sums run on the stream of Kokkos' CUDA execution
// space instance, so no host synchronisation sits between the backward kernels and the all-reduce.
// Waiting is polled like the MPI watchdog (comm/watchdog.hpp) and with its stall inspector:
// ncclCommGetAsyncError is checked; past the timeout rank 0 pings every rank over MPI, names the
// ranks that do not answer (they never arrived in the all-reduce) and tells the others to abort; then
// every rank that can aborts its communicator (ncclCommAbort) and the job (MPI_Abort, non-zero). The
// other ranks wait a grace period longer before aborting on their own, which covers a dead rank 0.
// Builds without NCCL compile this file too: available() is false and construction throws.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "comm/comm.hpp"

namespace hpct {

class NcclCollective {
 public:
  static bool available();       // this build has NCCL and CUDA
  static std::string version();  // "2.28.9", or "" without NCCL
  // Collective over `comm`. Throws an hpct::Error (agreed by the caller) when NCCL is unavailable or
  // initialisation fails.
  NcclCollective(const Comm& comm, double timeout_seconds);
  ~NcclCollective();
  NcclCollective(const NcclCollective&) = delete;
  NcclCollective& operator=(const NcclCollective&) = delete;
  // In-place sum over ranks of device memory data[0, n) at optimizer step `step`; returns when the
  // result is in `data`. Aborts the job when the timeout passes or NCCL reports an error.
  void sum(float* data, std::size_t n, std::uint64_t step);

 private:
  static constexpr double kGraceSeconds = 5.0;  // as the MPI watchdog's
  struct State;
  std::unique_ptr<State> state_;
  const Comm& comm_;
  int rank_ = 0;
  double timeout_;
};

}  // namespace hpct
