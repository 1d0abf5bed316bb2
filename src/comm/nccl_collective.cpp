// NCCL communicator and the polled, watched sum (see nccl_collective.hpp).
#include "comm/nccl_collective.hpp"

#include <cstdio>

#include "core/error.hpp"

#if defined(HPCTRAIN_HAVE_NCCL) && defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#include <nccl.h>
#include <sched.h>

#include <vector>

#include "comm/watchdog.hpp"
#include "core/log.hpp"
#include "core/timer.hpp"
#define HPCTRAIN_NCCL 1
#endif

namespace hpct {

#if defined(HPCTRAIN_NCCL)

struct NcclCollective::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
};

namespace {
void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw Error(std::string("NCCL ") + what + ": " + ncclGetErrorString(r));
}
}  // namespace

bool NcclCollective::available() { return true; }

std::string NcclCollective::version() {
  int v = 0;
  ncclGetVersion(&v);
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

NcclCollective::NcclCollective(const Comm& comm, double timeout_seconds)
    : state_(std::make_unique<State>()), comm_(comm), rank_(comm.rank()), timeout_(timeout_seconds) {
  ncclUniqueId id;
  std::string err;
  if (comm.rank() == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) err = std::string("NCCL unique id: ") + ncclGetErrorString(r);
  }
  comm.broadcast(err, 0);
  comm.agree(err, ExitCode::failure);
  comm.broadcast(reinterpret_cast<char*>(&id), sizeof(id), 0);
  comm.run_agreed([&] { check(ncclCommInitRank(&state_->comm, comm.size(), id, comm.rank()), "init"); });
  state_->stream = ExecSpace().cuda_stream();
  cudaEventCreateWithFlags(&state_->done, cudaEventDisableTiming);
}

NcclCollective::~NcclCollective() {
  if (state_->done) cudaEventDestroy(state_->done);
  if (state_->comm) ncclCommDestroy(state_->comm);
}

void NcclCollective::sum(float* data, std::size_t n, std::uint64_t step) {
  if (n == 0) return;
  const ncclResult_t launched = ncclAllReduce(data, data, n, ncclFloat, ncclSum, state_->comm, state_->stream);
  cudaEventRecord(state_->done, state_->stream);
  const unsigned long long shown_step = (unsigned long long)step + 1;
  std::string message;
  if (launched != ncclSuccess)
    message = strf("rank %d: the NCCL gradient all-reduce of step %llu did not start: %s", rank_, shown_step,
                   ncclGetErrorString(launched));
  // Rank 0 decides at the timeout; the others answer its pings and wait a grace period longer.
  const double deadline = rank_ == 0 ? timeout_ : timeout_ + kGraceSeconds;
  Stopwatch waited;
  long polls = 0;
  while (message.empty()) {
    if (cudaEventQuery(state_->done) == cudaSuccess) return;
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(state_->comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      message = strf("rank %d: NCCL error in the gradient all-reduce of step %llu: %s", rank_, shown_step,
                     ncclGetErrorString(async));
      break;
    }
    const double w = timeout_ > 0 ? waited.seconds() : 0.0;
    if (timeout_ > 0 && rank_ != 0 && w > 0.5 * timeout_) {
      arrival::answer_pings(comm_);
      if (arrival::told_to_abort(comm_)) {
        message = strf("rank %d: aborting the NCCL gradient all-reduce of step %llu as rank 0 decided", rank_,
                       shown_step);
        break;
      }
    }
    if (timeout_ > 0 && w > deadline) {
      if (rank_ == 0) {
        const std::vector<int> silent = arrival::silent_ranks(comm_, kGraceSeconds * 0.5);
        std::vector<int> waiting;
        for (int r = 1, k = 0; r < comm_.size(); ++r) {
          if (k < static_cast<int>(silent.size()) && silent[static_cast<std::size_t>(k)] == r) ++k;
          else waiting.push_back(r);
        }
        arrival::tell_to_abort(comm_, waiting);
        message = strf(
            "watchdog: the NCCL gradient all-reduce of step %llu did not complete within %.0f s; "
            "rank(s) %s did not arrive (dead, hung or stuck elsewhere); aborting the job",
            shown_step, timeout_, arrival::list(silent).c_str());
      } else {
        message = strf(
            "watchdog: rank %d waited %.0f s in the NCCL gradient all-reduce of step %llu and rank 0 "
            "did not act (rank 0 dead or hung); aborting the job",
            rank_, timeout_ + kGraceSeconds, shown_step);
      }
      break;
    }
    if (++polls > 100000) sched_yield();
  }
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
  ncclCommAbort(state_->comm);
  state_->comm = nullptr;
  MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::failure));
}

#else  // no NCCL in this build

struct NcclCollective::State {};
bool NcclCollective::available() { return false; }
std::string NcclCollective::version() { return ""; }
NcclCollective::NcclCollective(const Comm& comm, double timeout_seconds)
    : comm_(comm), rank_(comm.rank()), timeout_(timeout_seconds) {
  throw Error("comm_backend nccl: this build has no NCCL (it needs a CUDA build with NCCL; see docs/cluster.md)",
              ExitCode::bad_input);
}
NcclCollective::~NcclCollective() = default;
void NcclCollective::sum(float*, std::size_t, std::uint64_t) {}

#endif

}  // namespace hpct
#undef HPCTRAIN_NCCL  // a CUDA batch goes on with other files (Note [CUDA batches])
