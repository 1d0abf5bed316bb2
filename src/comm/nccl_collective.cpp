// NCCL communicator and the polled, watched sum (see nccl_collective.hpp).
#include "comm/nccl_collective.hpp"

#include <cstdio>

#include "core/error.hpp"

#if defined(HPCTRAIN_HAVE_NCCL) && defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#include <nccl.h>
#include <sched.h>

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
    : state_(std::make_unique<State>()), rank_(comm.rank()), timeout_(timeout_seconds) {
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
  Stopwatch waited;
  long polls = 0;
  while (launched == ncclSuccess) {
    if (cudaEventQuery(state_->done) == cudaSuccess) return;
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(state_->comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) {
      std::fprintf(stderr, "rank %d: NCCL error in the gradient all-reduce at step %llu: %s\n", rank_,
                   (unsigned long long)step + 1, ncclGetErrorString(async));
      break;
    }
    if (timeout_ > 0 && waited.seconds() > timeout_) {
      std::fprintf(stderr,
                   "rank %d: the NCCL gradient all-reduce at step %llu did not complete within %.0f s "
                   "(watchdog_timeout); the ranks that report nothing never arrived\n",
                   rank_, (unsigned long long)step + 1, timeout_);
      break;
    }
    if (++polls > 100000) sched_yield();
  }
  ncclCommAbort(state_->comm);
  state_->comm = nullptr;
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::failure));
}

#else  // no NCCL in this build

struct NcclCollective::State {};
bool NcclCollective::available() { return false; }
std::string NcclCollective::version() { return ""; }
NcclCollective::NcclCollective(const Comm& comm, double timeout_seconds) : rank_(comm.rank()), timeout_(timeout_seconds) {
  throw Error("comm_backend nccl: this build has no NCCL (it needs a CUDA build with NCCL; see docs/cluster.md)",
              ExitCode::bad_input);
}
NcclCollective::~NcclCollective() = default;
void NcclCollective::sum(float*, std::size_t, std::uint64_t) {}

#endif

}  // namespace hpct
