// The three implementations of the step's collective interface and the backend choice (see
// gradient_collective.hpp).
#include "comm/gradient_collective.hpp"

#include "comm/hierarchical_allreduce.hpp"
#include "comm/nccl_collective.hpp"
#include "comm/shared_memory_reducer.hpp"
#include "comm/watchdog.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"

namespace hpct {

namespace {

// MPI: non-blocking collectives polled under the watchdog; the gradients whole after backward or
// by buckets started during it; device buffers staged through pinned host memory when MPI cannot
// read GPU memory.
class MpiGradientCollective final : public GradientCollective {
 public:
  MpiGradientCollective(const Comm& comm, const CollectiveOptions& o) : reducer_(comm, o.watchdog_timeout) {
    if (o.shard) {
      reducer_.reserve(2);
      reducer_.stage_device_buffer(o.params, o.count * sizeof(float));
      reducer_.stage_device_buffer(o.slice, o.shard->count * sizeof(float));
      Log::info(
          strf("  optimizer sharded over %d ranks: %llu of %llu parameters here (reduce-scatter, "
               "all-gather; bucket_mb does not apply)",
               comm.size(), (unsigned long long)o.shard->count, (unsigned long long)o.count));
    } else if (o.hierarchical && comm.size() > 1) {
      reducer_.reserve(1);
      hierarchy_ = std::make_unique<HierarchicalAllreduce>(comm, o.count, o.watchdog_timeout);
      Log::info(
          strf("  gradient all-reduce: hierarchical, %d node(s) of up to %d rank(s): sum in each node, "
               "all-reduce among the node leaders, broadcast (one sum after backward; bucket_mb does "
               "not apply)",
               hierarchy_->nodes(), comm.max(hierarchy_->node_size())));
    } else if (comm.size() > 1 && !o.buckets.empty()) {
      buckets_ = std::make_unique<GradientReducer>(reducer_, o.grads, o.buckets, o.overlap);
      const auto& plan = buckets_->buckets();
      Log::info(strf("  gradient all-reduce: %zu bucket(s) of %llu floats in all (the first %llu), %s", plan.size(),
                     (unsigned long long)o.count, (unsigned long long)plan.front().count,
                     o.overlap ? "started during backward of the last micro-step" : "after backward"));
    } else {
      reducer_.reserve(1);
    }
    if (comm.size() > 1 && !hierarchy_) {
      reducer_.stage_device_buffer(o.grads, o.count * sizeof(float));
      std::string how;
      if (!mpi_accepts_device_memory(&how))
        Log::info("  gradient all-reduce: staged through pinned host memory (MPI not CUDA-aware: " + how + ")");
    }
  }
  const char* backend() const override { return "mpi"; }
  bool overlaps() const override { return buckets_ && buckets_->overlap(); }
  void on_ready(std::uint64_t offset, std::uint64_t count) override { buckets_->on_ready(offset, count); }
  void arm(const float*) override {
    if (buckets_) buckets_->arm();
  }
  void disarm() override {
    if (buckets_) buckets_->disarm();
  }
  float* all_reduce(float* grads, std::size_t n, double* control, int nc, std::uint64_t step) override {
    if (buckets_) {  // the buckets not started during backward, then the control values: one wait
      buckets_->start_remaining();
      reducer_.start(control, static_cast<std::size_t>(nc));
      reducer_.wait(step);
    } else if (hierarchy_) {
      hierarchy_->sum(grads, n, step);
      reducer_.sum(control, static_cast<std::size_t>(nc), step);  // a few doubles: flat
    } else {
      reducer_.sum(grads, n, step);
      reducer_.sum(control, static_cast<std::size_t>(nc), step);
    }
    return grads;
  }
  void reduce_scatter(const float* grads, const ParameterShard& shard, float* slice, double* control, int nc,
                      std::uint64_t step) override {
    reducer_.start_reduce_scatter(grads, slice, shard.counts.data());
    reducer_.start(control, static_cast<std::size_t>(nc));
    reducer_.wait(step);
  }
  double sum_scalar(double value, std::uint64_t step) override {
    reducer_.sum(&value, 1, step);
    return value;
  }
  void all_gather(float* params, const ParameterShard& shard, std::uint64_t step) override {
    reducer_.start_allgather(params, shard.counts.data(), shard.displs.data());
    reducer_.wait(step);
  }
  const GradientReducer* buckets() const override { return buckets_.get(); }

 private:
  WatchedAllreduce reducer_;
  std::unique_ptr<GradientReducer> buckets_;
  std::unique_ptr<HierarchicalAllreduce> hierarchy_;
};

// NCCL: the gradient sum on the Kokkos CUDA stream under NCCL's own watchdog; the control values
// (host doubles) over watched MPI.
class NcclGradientCollective final : public GradientCollective {
 public:
  NcclGradientCollective(const Comm& comm, const CollectiveOptions& o)
      : nccl_(comm, o.watchdog_timeout), control_(comm, o.watchdog_timeout) {
    control_.reserve(1);
    Log::info("  gradient all-reduce: NCCL " + NcclCollective::version() +
              " on the Kokkos CUDA stream (one sum after backward; control values on MPI)");
  }
  const char* backend() const override { return "nccl"; }
  float* all_reduce(float* grads, std::size_t n, double* control, int nc, std::uint64_t step) override {
    nccl_.sum(grads, n, step);
    control_.sum(control, static_cast<std::size_t>(nc), step);
    return grads;
  }
  // Refused when made (make_gradient_collective): NCCL has no sharded exchange here yet.
  void reduce_scatter(const float*, const ParameterShard&, float*, double*, int, std::uint64_t) override {
    throw Error("comm_backend nccl: no reduce-scatter", ExitCode::failure);
  }
  double sum_scalar(double value, std::uint64_t step) override {
    control_.sum(&value, 1, step);
    return value;
  }
  void all_gather(float*, const ParameterShard&, std::uint64_t) override {
    throw Error("comm_backend nccl: no all-gather", ExitCode::failure);
  }

 private:
  NcclCollective nccl_;
  WatchedAllreduce control_;
};

// The node's shared-memory window (Note [why shared memory] in comm/shared_memory_reducer.hpp):
// gradients and control values in one exchange, no MPI call on the step's path.
class ShmGradientCollective final : public GradientCollective {
 public:
  ShmGradientCollective(const Comm& comm, const CollectiveOptions& o)
      : shm_(comm, o.count, o.watchdog_timeout, o.shard != nullptr, o.grad_pages), overlap_(o.overlap) {
    Log::info(
        strf("  gradient all-reduce: node shared memory, %d ranks, %llu floats in chunks of %llu (%s), %s%s",
             comm.size(), (unsigned long long)o.count, (unsigned long long)SharedMemoryReducer::kChunk,
             shm_.slot_is_gradient_buffer() ? "the gradient buffer is in the window" : "copied into the window",
             o.overlap ? "published during backward of the last micro-step" : "after backward",
             o.shard ? strf("; optimizer sharded: %llu parameters here", (unsigned long long)o.shard->count).c_str()
                     : ""));
  }
  const char* backend() const override { return "shm"; }
  bool overlaps() const override { return overlap_; }
  void on_ready(std::uint64_t offset, std::uint64_t count) override { shm_.on_ready(offset, count); }
  void arm(const float* grads) override { shm_.arm(grads); }
  void disarm() override { shm_.disarm(); }
  float* all_reduce(float* grads, std::size_t, double* control, int nc, std::uint64_t step) override {
    fence();  // the last kernels of backward wrote the gradients
    shm_.contribute(grads, control, nc);
    shm_.reduce(step, control, nc);
    return shm_.sum();  // this rank's slot of the window
  }
  void reduce_scatter(const float* grads, const ParameterShard& shard, float* slice, double* control, int nc,
                      std::uint64_t step) override {
    fence();
    shm_.contribute(grads, control, nc);
    shm_.reduce_slice(step, shard.offset, shard.count, slice, control, nc);
  }
  double sum_scalar(double value, std::uint64_t step) override { return shm_.sum_scalar(step, value); }
  void all_gather(float* params, const ParameterShard& shard, std::uint64_t step) override {
    shm_.all_gather(step, params, shard.offset, shard.count);
  }
  void skip_all_gather() override { shm_.end_exchange(); }

 private:
  SharedMemoryReducer shm_;
  bool overlap_;
};

std::string choose_backend(const std::string& wanted, const Comm& comm) {
  if (wanted == "shm") {
    if (!kHostBackend)
      throw Error("comm_backend shm: the gradients live in GPU memory on this build; use nccl or mpi",
                  ExitCode::bad_input);
    if (!SharedMemoryReducer::node_local(comm))
      throw Error(
          "comm_backend shm: the ranks are spread over several nodes; shm needs all of them on one node "
          "(use mpi or auto)",
          ExitCode::bad_input);
    return comm.size() == 1 ? "mpi" : "shm";  // one rank: nothing to sum
  }
  if (wanted != "auto") return wanted;
  if (comm.size() == 1) return "mpi";
  if (NcclCollective::available()) return "nccl";
  if (kHostBackend && SharedMemoryReducer::node_local(comm)) return "shm";
  return "mpi";
}

}  // namespace

std::unique_ptr<GradientCollective> make_gradient_collective(const Comm& comm, const CollectiveOptions& o) {
  if (o.hierarchical) {  // an MPI path: the window and NCCL sum flat within their own reach
    if (o.backend == "nccl" || o.backend == "shm")
      throw Error("hierarchical_allreduce: runs over MPI; set comm_backend mpi or auto", ExitCode::bad_input);
    if (!kHostBackend)
      throw Error("hierarchical_allreduce: host builds only (the node sum runs on the host)", ExitCode::bad_input);
    if (o.shard)
      throw Error("hierarchical_allreduce: not with optimizer_sharding (its reduce-scatter is flat)",
                  ExitCode::bad_input);
    return std::make_unique<MpiGradientCollective>(comm, o);
  }
  const std::string backend = choose_backend(o.backend, comm);
  if (backend == "shm") {
    try {
      return std::make_unique<ShmGradientCollective>(comm, o);
    } catch (const Error& e) {  // agreed by every rank, so all of them fall back (auto) or stop
      if (o.backend != "auto") throw;
      Log::info("warning: " + std::string(e.what()) + "; the gradients go over MPI instead");
    }
  } else if (backend == "nccl") {
    if (o.shard)
      throw Error("comm_backend nccl: optimizer_sharding runs on MPI only; set comm_backend mpi",
                  ExitCode::bad_input);
    return std::make_unique<NcclGradientCollective>(comm, o);
  }
  return std::make_unique<MpiGradientCollective>(comm, o);
}

}  // namespace hpct
