// The reduction and update half of an optimizer step (see step.hpp).
#include "train/step.hpp"

#include <cmath>

#include "core/log.hpp"
#include "core/runtime.hpp"

namespace hpct {

// Note [optimizer sharding]: ZeRO stage 1. Rank r owns a contiguous slice of the flat buffers (equal
// parts, the first n % ranks slices one longer) and keeps the optimizer state (m, v) of that slice
// only. A step reduce-scatters the gradients (each rank receives the summed gradients of its slice),
// unscales and clips its slice, updates its slice of the parameters, and all-gathers the parameters.
// The global gradient norm (clipping, the non-finite check, the log) is the square root of the sum
// over ranks of the slices' squared norms: one more fp64 all-reduce of one value. Every operation on
// a gradient element is the one of the unsharded step, and with 2 ranks each element's sum is the
// same a + b, so the parameters are bitwise the unsharded ones unless clipping is on: the norm is
// then summed in another association (two partial sums), which may move its last bit and so the
// clip coefficient (within 1e-6 then; bitwise in the tests). Checkpoints hold the whole state, as
// without sharding, so runs resume across the setting: it is gathered on rank 0 into a temporary
// full-size optimizer for a write, and read whole by every rank, which keeps its slice.
namespace {
ParameterShard shard_of(const Comm& comm, std::uint64_t n, bool sharded) {
  ParameterShard s;
  s.count = n;
  if (!sharded || comm.size() == 1) return s;
  const auto p = static_cast<std::uint64_t>(comm.size());
  std::uint64_t offset = 0;
  for (std::uint64_t r = 0; r < p; ++r) {
    const std::uint64_t count = n / p + (r < n % p ? 1 : 0);
    s.counts.push_back(static_cast<int>(count));
    s.displs.push_back(static_cast<int>(offset));
    if (r == static_cast<std::uint64_t>(comm.rank())) s.offset = offset, s.count = count;
    offset += count;
  }
  return s;
}

View1<std::uint8_t> decay_mask(const TrainConfig& config, const nn::ParameterStore<float>& store,
                               const ParameterShard& shard) {
  // weight_decay_all: every parameter, so no mask, unless state lives with the parameters (batch
  // norm's running statistics), which no decay may touch.
  if (config.decay_all_parameters && store.all_trainable()) return {};
  View1<std::uint8_t> full = store.decay_mask(config.decay_all_parameters);
  if (shard.count == store.count()) return full;
  View1<std::uint8_t> slice("decay_mask_shard", shard.count);
  Kokkos::deep_copy(slice, Kokkos::subview(full, std::make_pair(shard.offset, shard.offset + shard.count)));
  return slice;
}

// comm_backend auto: NCCL where the build has it; between ranks that share one node's memory on a
// host build, the shared-memory reducer (Note [why shared memory] in comm/shared_memory_reducer.hpp);
// MPI otherwise.
std::string choose_backend(const TrainConfig& config, const Comm& comm) {
  if (config.comm_backend == "shm") {
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
  if (config.comm_backend != "auto") return config.comm_backend;
  if (comm.size() == 1) return "mpi";
  if (NcclCollective::available()) return "nccl";
  if (kHostBackend && SharedMemoryReducer::node_local(comm)) return "shm";
  return "mpi";
}

std::vector<GradientBucket> buckets_of(const TrainConfig& config, const nn::ParameterStore<float>& store) {
  std::vector<std::uint64_t> offsets;
  for (const auto& t : store.tensors()) offsets.push_back(t.offset);
  const double bytes = config.bucket_mb * 1024.0 * 1024.0;
  return plan_gradient_buckets(offsets, store.count(), bytes, GradientReducer::kFirstBucketBytes);
}
}  // namespace

StepRunner::StepRunner(const TrainConfig& config, const Comm& comm, Model& model, std::uint64_t total_steps)
    : comm_(comm),
      model_(model),
      optimizer_config_(config.optimizer),
      reducer_(comm, config.watchdog_timeout),
      shard_(shard_of(comm, model.store().count(), config.optimizer_sharding)),
      optimizer_(config.optimizer, shard_.count, decay_mask(config, model.store(), shard_)),
      schedule_(config.schedule),
      scaler_(config.precision == nn::Precision::fp16, config.loss_scale_init, config.loss_scale_growth_interval),
      clip_(config.clip_grad_norm) {
  schedule_.total_steps = total_steps;
  const std::string backend = choose_backend(config, comm);
  if (sharded()) shard_grads_ = View1<float>("shard_grads", shard_.count);
  if (backend == "shm") {
    try {
      shm_ = std::make_unique<SharedMemoryReducer>(comm, model.store().count(), config.watchdog_timeout, sharded(),
                                                   model.store().gradient_pages());
    } catch (const Error& e) {  // agreed by every rank, so all of them fall back (auto) or stop
      if (config.comm_backend != "auto") throw;
      Log::info("warning: " + std::string(e.what()) + "; the gradients go over MPI instead");
    }
  }
  if (shm_) {
    if (config.overlap_allreduce) {
      SharedMemoryReducer* s = shm_.get();
      model_.set_gradient_ready_hook([s](std::uint64_t offset, std::uint64_t count) {
        s->on_ready(offset, count);
      });
    }
    Log::info(strf(
        "  gradient all-reduce: node shared memory, %d ranks, %llu floats in chunks of %llu (%s), %s%s",
        comm.size(), (unsigned long long)model.store().count(), (unsigned long long)SharedMemoryReducer::kChunk,
        shm_->slot_is_gradient_buffer() ? "the gradient buffer is in the window" : "copied into the window",
        config.overlap_allreduce ? "published during backward of the last micro-step" : "after backward",
        sharded() ? strf("; optimizer sharded: %llu parameters here", (unsigned long long)shard_.count).c_str()
                  : ""));
  } else if (backend == "nccl") {
    if (sharded())
      throw Error("comm_backend nccl: optimizer_sharding runs on MPI only; set comm_backend mpi",
                  ExitCode::bad_input);
    nccl_ = std::make_unique<NcclCollective>(comm, config.watchdog_timeout);
    Log::info("  gradient all-reduce: NCCL " + NcclCollective::version() +
              " on the Kokkos CUDA stream (one sum after backward; control values on MPI)");
  } else if (sharded()) {
    reducer_.reserve(2);
    reducer_.stage_device_buffer(model.store().params().data(), model.store().count() * sizeof(float));
    reducer_.stage_device_buffer(shard_grads_.data(), shard_.count * sizeof(float));
    Log::info(
        strf("  optimizer sharded over %d ranks: %llu of %llu parameters here (reduce-scatter, all-gather; "
             "bucket_mb does not apply)",
             comm.size(), (unsigned long long)shard_.count, (unsigned long long)model.store().count()));
  } else if (comm.size() > 1 && config.bucket_mb > 0) {
    buckets_ = std::make_unique<GradientReducer>(reducer_, model.store().grads().data(),
                                                 buckets_of(config, model.store()), config.overlap_allreduce);
    // Installed once: the hook is called from the layers every step and must not allocate.
    if (config.overlap_allreduce) {
      GradientReducer* b = buckets_.get();
      model_.set_gradient_ready_hook([b](std::uint64_t offset, std::uint64_t count) {
        b->on_ready(offset, count);
      });
    }
    const auto& plan = buckets_->buckets();
    Log::info(strf("  gradient all-reduce: %zu bucket(s) of %llu floats in all (the first %llu), %s", plan.size(),
                   (unsigned long long)model.store().count(), (unsigned long long)plan.front().count,
                   config.overlap_allreduce ? "started during backward of the last micro-step" : "after backward"));
  } else {
    reducer_.reserve(1);
  }
  // Without a CUDA-aware MPI the gradients (and, sharded, the parameters) go through pinned host
  // memory (comm/host_staging.hpp); a no-op on host builds and under NCCL (the buffer is never given).
  if (!nccl_ && !shm_ && comm.size() > 1) {
    reducer_.stage_device_buffer(model.store().grads().data(), model.store().count() * sizeof(float));
    std::string how;
    if (!mpi_accepts_device_memory(&how))
      Log::info("  gradient all-reduce: staged through pinned host memory (MPI not CUDA-aware: " + how + ")");
  }
}

StepRunner::~StepRunner() {
  if ((buckets_ && buckets_->overlap()) || shm_) model_.set_gradient_ready_hook(nullptr);
}

void StepRunner::arm_reducers(bool on) {
  if (buckets_) on ? buckets_->arm() : buckets_->disarm();
  if (shm_) on ? shm_->arm(model_.store().grads().data()) : shm_->disarm();
}

StepOutcome StepRunner::finish(double loss_sum, std::uint64_t global_step, std::uint64_t step_samples,
                               const StepControl& control, TimeSplit& time) {
  auto& store = model_.store();
  StepOutcome r;
  r.loss_scale = scaler_.scale();
  control_ = {loss_sum, control.stop_requested ? 1.0 : 0.0, control.time_checkpoint_due ? 1.0 : 0.0};
  if (sharded()) return finish_sharded(r, global_step, step_samples, time);
  {
    ScopedTime t(time.comm, "allreduce");
    if (nccl_) {
      nccl_->sum(store.grads().data(), store.count(), global_step);
      reducer_.sum(control_.data(), control_.size(), global_step);
    } else if (shm_) {
      fence();  // the last kernels of backward wrote the gradients
      shm_->contribute(store.grads().data(), control_.data(), static_cast<int>(control_.size()));
      shm_->reduce(global_step, control_.data(), static_cast<int>(control_.size()));
    } else if (buckets_) {
      // The buckets not started during backward, then the control values, all under one watchdog.
      buckets_->start_remaining();
      reducer_.start(control_.data(), control_.size());
      reducer_.wait(global_step);
    } else {
      reducer_.sum(store.grads().data(), store.count(), global_step);
      reducer_.sum(control_.data(), control_.size(), global_step);
    }
  }
  ScopedTime t(time.compute, "optimizer");
  r.loss = control_[0] / static_cast<double>(step_samples);
  r.stop = control_[1] > 0;
  r.checkpoint_due = control_[2] > 0;
  // With shm the summed gradients are in this rank's slot of the shared window, not in the store.
  const auto grads = shm_ ? nn::ParameterStore<float>::Vector(shm_->sum(), store.count()) : store.grad_span();
  if (scaler_.enabled()) optim::scale_values<float>(grads, 1.0 / r.loss_scale);  // unscale, then clip
  r.grad_norm = clip_ > 0 ? optim::clip_grad_norm<float>(grads, clip_) : optim::grad_norm<float>(grads);
  r.nonfinite = !std::isfinite(r.loss) || !std::isfinite(r.grad_norm);
  if (!scaler_.update(r.nonfinite)) {
    r.applied = false;
    return r;
  }
  optimizer_.step(store.param_span(), grads, schedule_.at(global_step));
  fence();
  return r;
}

StepOutcome StepRunner::finish_sharded(StepOutcome r, std::uint64_t global_step, std::uint64_t step_samples,
                                       TimeSplit& time) {
  auto& store = model_.store();
  using Vector = optim::Optimizer<float>::Vector;
  const Vector grads(shard_grads_.data(), shard_.count);
  full_state_.reset();  // rank 0's whole-state copy from the last checkpoint write: not kept around
  {
    ScopedTime t(time.comm, "reduce_scatter");
    if (shm_) {
      fence();  // the last kernels of backward wrote the gradients
      shm_->contribute(store.grads().data(), control_.data(), static_cast<int>(control_.size()));
      shm_->reduce_slice(global_step, shard_.offset, shard_.count, shard_grads_.data(), control_.data(),
                         static_cast<int>(control_.size()));
    } else {
      reducer_.start_reduce_scatter(store.grads().data(), shard_grads_.data(), shard_.counts.data());
      reducer_.start(control_.data(), control_.size());
      reducer_.wait(global_step);
    }
  }
  r.loss = control_[0] / static_cast<double>(step_samples);
  r.stop = control_[1] > 0;
  r.checkpoint_due = control_[2] > 0;
  {
    ScopedTime t(time.compute, "optimizer");
    if (scaler_.enabled()) optim::scale_values<float>(grads, 1.0 / r.loss_scale);
    const double norm = optim::grad_norm<float>(grads);
    norm_sq_ = norm * norm;
  }
  {
    ScopedTime t(time.comm, "allreduce");
    if (shm_) norm_sq_ = shm_->sum_scalar(global_step, norm_sq_);
    else reducer_.sum(&norm_sq_, 1, global_step);
  }
  r.grad_norm = std::sqrt(norm_sq_);
  r.nonfinite = !std::isfinite(r.loss) || !std::isfinite(r.grad_norm);
  if (!scaler_.update(r.nonfinite)) {
    r.applied = false;
    if (shm_) shm_->end_exchange();  // every rank skips the all-gather alike
    return r;
  }
  {
    ScopedTime t(time.compute, "optimizer");
    // clip_grad_norm's rule, with the global norm.
    const double coef = clip_ / (r.grad_norm + 1e-6);
    if (clip_ > 0 && coef < 1.0) optim::scale_values<float>(grads, coef);
    optimizer_.step(Vector(store.params().data() + shard_.offset, shard_.count), grads, schedule_.at(global_step));
    fence();  // MPI reads the updated slice
  }
  ScopedTime t(time.comm, "allgather");
  if (shm_) {
    shm_->all_gather(global_step, store.params().data(), shard_.offset, shard_.count);
  } else {
    reducer_.start_allgather(store.params().data(), shard_.counts.data(), shard_.displs.data());
    reducer_.wait(global_step);
  }
  return r;
}

const optim::Optimizer<float>& StepRunner::optimizer_for_save() {
  if (!sharded()) return optimizer_;
  const std::uint64_t n = model_.store().count();
  if (comm_.rank() == 0 && !full_state_)
    full_state_ = std::make_unique<optim::Optimizer<float>>(optimizer_config_, n);
  fence();
  // Through host copies (the same views on host builds): MPI may not read device memory, and a
  // checkpoint may allocate.
  const auto gather = [&](const View1<float>& slice, const View1<float>* full) {
    const auto slice_host = to_host(slice);
    auto full_host = full ? Kokkos::create_mirror_view(*full) : decltype(Kokkos::create_mirror_view(slice))();
    MPI_Gatherv(slice_host.data(), static_cast<int>(shard_.count), MPI_FLOAT, full ? full_host.data() : nullptr,
                shard_.counts.data(), shard_.displs.data(), MPI_FLOAT, 0, comm_.raw());
    if (full) Kokkos::deep_copy(*full, full_host);
  };
  gather(optimizer_.first_moment(), full_state_ ? &full_state_->first_moment() : nullptr);
  if (optimizer_.second_moment().extent(0) > 0)
    gather(optimizer_.second_moment(), full_state_ ? &full_state_->second_moment() : nullptr);
  if (comm_.rank() != 0) return optimizer_;  // only rank 0 writes
  full_state_->set_steps_taken(optimizer_.steps_taken());
  return *full_state_;
}

optim::Optimizer<float>& StepRunner::optimizer_for_load() {
  if (!sharded()) return optimizer_;
  if (!full_state_)
    full_state_ = std::make_unique<optim::Optimizer<float>>(optimizer_config_, model_.store().count());
  return *full_state_;
}

void StepRunner::optimizer_loaded() {
  if (!sharded() || !full_state_) return;
  const auto slice = std::make_pair(shard_.offset, shard_.offset + shard_.count);
  Kokkos::deep_copy(optimizer_.first_moment(), Kokkos::subview(full_state_->first_moment(), slice));
  if (optimizer_.second_moment().extent(0) > 0)
    Kokkos::deep_copy(optimizer_.second_moment(), Kokkos::subview(full_state_->second_moment(), slice));
  optimizer_.set_steps_taken(full_state_->steps_taken());
  full_state_.reset();  // the whole state is needed again only at the next checkpoint (rank 0)
}

}  // namespace hpct
