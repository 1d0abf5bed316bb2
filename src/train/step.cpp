// The reduction and update half of an optimizer step (see step.hpp).
#include "train/step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/log.hpp"
#include "core/runtime.hpp"
#include "nn/parameter_generation.hpp"

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
ParameterShard shard_of(const Comm& comm, std::uint64_t n, bool sharded, bool block_aligned) {
  ParameterShard s;
  s.count = n;
  if (!sharded || comm.size() == 1) return s;
  if (block_aligned) return FixedPointSum::aligned_shard(comm, n);  // Note [rank invariance]
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

bool range_finite(const optim::Optimizer<float>::Vector& grads, std::uint64_t begin, std::uint64_t end) {
  return end == begin ||
         optim::all_finite<float>(optim::Optimizer<float>::Vector(grads.data() + begin, end - begin));
}

std::vector<GradientBucket> buckets_of(const TrainConfig& config, const nn::ParameterStore<float>& store) {
  std::vector<std::uint64_t> offsets;
  for (const auto& t : store.tensors()) offsets.push_back(t.offset);
  const double bytes = config.bucket_mb * 1024.0 * 1024.0;
  return plan_gradient_buckets(offsets, store.count(), bytes, GradientReducer::kFirstBucketBytes);
}
}  // namespace

bool gradients_finite(const nn::ParameterStore<float>& store, const optim::Optimizer<float>::Vector& grads) {
  const auto& tensors = store.tensors();
  // The tensors without a proof, read in runs of neighbours (one pass each, as the full check).
  std::uint64_t begin = 0, end = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (store.gradient_proven_finite(i)) continue;
    const auto& t = tensors[i];
    if (t.offset != end) {
      if (!range_finite(grads, begin, end)) return false;
      begin = t.offset;
    }
    end = t.offset + t.size;
  }
  return range_finite(grads, begin, end);
}

StepRunner::StepRunner(const TrainConfig& config, const Comm& comm, Model& model, std::uint64_t total_steps)
    : comm_(comm),
      model_(model),
      optimizer_config_(config.optimizer),
      shard_(shard_of(comm, model.store().count(), config.optimizer_sharding, config.rank_invariant)),
      optimizer_(config.optimizer, shard_.count, decay_mask(config, model.store(), shard_)),
      schedule_(config.schedule),
      scaler_(config.precision == nn::Precision::fp16, config.loss_scale_init, config.loss_scale_growth_interval),
      clip_(config.clip_grad_norm),
      log_every_(config.log_every),
      total_steps_(total_steps) {
  schedule_.total_steps = total_steps;
  if (sharded()) shard_grads_ = View1<float>("shard_grads", shard_.count);
  prove_finite_ = kHostBackend && comm.size() == 1 && !sharded() && !scaler_.enabled() && !(clip_ > 0) &&
                  !config.rank_invariant;
  auto& store = model.store();
  CollectiveOptions o = config.collective_options();
  // rank_invariant: the gradients go through FixedPointSum; the collective is the tree's one exchange
  // at 2 ranks (unsharded; Note [overlapped tree]), else it all-gathers only.
  const bool tree_exchange = comm.size() == 2 && !sharded();
  if (config.rank_invariant) {
    chunk_ = config.rank_invariant_chunk;
    if (chunk_ == 0)  // only NetworkTrainer cuts the steps into chunks (resolve_micro_batching)
      throw Error("rank_invariant: network training by `train` only (not the in-situ library)",
                  ExitCode::bad_input);
    if (!tree_exchange) o.overlap = false;
    if (sharded()) o.backend = "mpi", o.hierarchical = false;
  }
  // Buckets need a plan and more than one rank; sharding exchanges slices instead (Note [optimizer sharding]).
  if (comm.size() > 1 && config.bucket_mb > 0 && !sharded() && (!config.rank_invariant || tree_exchange))
    o.buckets = buckets_of(config, store);
  o.grads = store.grads().data();
  o.params = store.params().data();
  o.count = store.count();
  o.grad_pages = store.gradient_pages();
  o.shard = sharded() ? &shard_ : nullptr;
  o.slice = shard_grads_.data();
  collective_ = make_gradient_collective(comm, o);
  if (config.rank_invariant) {
    // Note [fused chunks]: a chunk's parameter gradients in one fixed order, fused or not.
    if (model.rows_independent()) store.set_fixed_order_gradients(true);
    invariant_ = std::make_unique<FixedPointSum>(
        comm, store,
        static_cast<int>(config.batch_size * static_cast<std::uint64_t>(config.accumulation_steps) / chunk_),
        config.rank_invariant_fused, config.watchdog_timeout, sharded() ? nullptr : collective_.get());
    chunk_losses_.resize(static_cast<std::size_t>(invariant_->fused()));
  }
  if (config.ema.on()) {  // started at the initial weights (a resume replaces them: ema_loaded)
    ema_ = std::make_unique<optim::WeightEma>(config.ema, shard_.count);
    ema_->reset(optim::WeightEma::Vector(store.params().data() + shard_.offset, shard_.count));
  }
  // Installed once: the hook is called from the layers every step and must not allocate.
  if (invariant_ && invariant_->overlaps()) {  // the node of this rank's chunks first (Note [overlapped tree])
    FixedPointSum* f = invariant_.get();
    model_.set_gradient_ready_hook([f](std::uint64_t offset, std::uint64_t count) { f->on_ready(offset, count); });
  } else if (collective_->overlaps() && !invariant_) {
    GradientCollective* c = collective_.get();
    model_.set_gradient_ready_hook([c](std::uint64_t offset, std::uint64_t count) { c->on_ready(offset, count); });
  }
}

StepRunner::~StepRunner() {
  if (collective_->overlaps() || (invariant_ && invariant_->overlaps())) model_.set_gradient_ready_hook(nullptr);
}

void StepRunner::arm_reducers(bool on) {
  if (on) collective_->arm(model_.store().grads().data());
  else collective_->disarm();
}

void StepRunner::decode_control(StepOutcome& r, std::uint64_t step_samples) const {
  r.loss = control_[0] / static_cast<double>(step_samples);
  r.stop = control_[1] > 0;
  r.checkpoint_due = control_[2] > 0;
}

StepOutcome StepRunner::finish(double loss_sum, std::uint64_t global_step, std::uint64_t step_samples,
                               const StepControl& control, TimeSplit& time) {
  auto& store = model_.store();
  StepOutcome r;
  r.loss_scale = scaler_.scale();
  control_ = {loss_sum, control.stop_requested ? 1.0 : 0.0, control.time_checkpoint_due ? 1.0 : 0.0};
  if (invariant_) return finish_invariant(r, global_step, step_samples, control, time);
  if (sharded()) return finish_sharded(r, global_step, step_samples, time);
  float* summed = nullptr;
  {
    ScopedTime t(time.comm, "allreduce");
    summed = collective_->all_reduce(store.grads().data(), store.count(), control_.data(),
                                     static_cast<int>(control_.size()), global_step);
  }
  ScopedTime t(time.compute, "optimizer");
  decode_control(r, step_samples);
  // The summed gradients: the store's buffer, or (shared memory) this rank's slot of the window.
  const nn::ParameterStore<float>::Vector grads(summed, store.count());
  if (scaler_.enabled()) optim::scale_values<float>(grads, 1.0 / r.loss_scale);  // unscale, then clip
  // Note [norm only when wanted]: the norm is needed for clipping, for the step's progress record,
  // and for the non-finite check that skips a step; that check alone is a cheaper pass with the same
  // verdict (optim::all_finite). The norm took 6.7% of a batch-16 step of the denoiser, computed
  // every step for a record written every log_every steps; a step whose gradients are not finite
  // computes it too, so its message and record are as before. Logged steps and the weights are
  // bitwise as before.
  if (clip_ > 0) {
    r.grad_norm = optim::clip_grad_norm<float>(grads, clip_);
  } else if (step_is_logged(global_step + 1, log_every_, total_steps_) ||
             !(bounds_armed_ && summed == store.grads().data() ? gradients_finite(store, grads)
                                                               : optim::all_finite<float>(grads))) {
    r.grad_norm = optim::grad_norm<float>(grads);
  }
  r.nonfinite = !std::isfinite(r.loss) || !std::isfinite(r.grad_norm);
  if (!scaler_.update(r.nonfinite)) {
    r.applied = false;
    return r;
  }
  // The update zeroes the gradients it read when they are the store's own (not a shared-memory
  // window's slot): the next step then skips its zeroing pass (Note [gradient zeroing in the update]).
  const bool zero_in_update = summed == store.grads().data();
  optimizer_.step(store.param_span(), grads, schedule_.at(global_step), zero_in_update);
  if (ema_) ema_->update(store.param_span());
  grads_zeroed_ = zero_in_update;
  fence();
  nn::parameters_written();  // Note [parameter generation]
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
    collective_->reduce_scatter(store.grads().data(), shard_, shard_grads_.data(), control_.data(),
                                static_cast<int>(control_.size()), global_step);
  }
  decode_control(r, step_samples);
  {
    ScopedTime t(time.compute, "optimizer");
    if (scaler_.enabled()) optim::scale_values<float>(grads, 1.0 / r.loss_scale);
    const double norm = optim::grad_norm<float>(grads);
    norm_sq_ = norm * norm;
  }
  {
    ScopedTime t(time.comm, "allreduce");
    norm_sq_ = collective_->sum_scalar(norm_sq_, global_step);
  }
  r.grad_norm = std::sqrt(norm_sq_);
  r.nonfinite = !std::isfinite(r.loss) || !std::isfinite(r.grad_norm);
  if (!scaler_.update(r.nonfinite)) {
    r.applied = false;
    collective_->skip_all_gather();  // every rank skips the all-gather alike
    return r;
  }
  {
    ScopedTime t(time.compute, "optimizer");
    // clip_grad_norm's rule, with the global norm.
    const double coef = clip_ / (r.grad_norm + 1e-6);
    if (clip_ > 0 && coef < 1.0) optim::scale_values<float>(grads, coef);
    const Vector slice(store.params().data() + shard_.offset, shard_.count);
    optimizer_.step(slice, grads, schedule_.at(global_step));
    if (ema_) ema_->update(slice);
    fence();  // the collective reads the updated slice
  }
  ScopedTime t(time.comm, "allgather");
  collective_->all_gather(store.params().data(), shard_, global_step);
  nn::parameters_written();  // Note [parameter generation]
  return r;
}

StepOutcome StepRunner::finish_invariant(StepOutcome r, std::uint64_t global_step, std::uint64_t step_samples,
                                         const StepControl& control, TimeSplit& time) {
  auto& store = model_.store();
  const ParameterShard* shard = sharded() ? &shard_ : nullptr;
  float* out = sharded() ? shard_grads_.data() : store.grads().data();
  FixedPointSum::Outcome o;
  {
    ScopedTime t(time.comm, "allreduce");
    o = invariant_->reduce(out, shard, static_cast<int>((step_samples + chunk_ - 1) / chunk_),
                           control.stop_requested, control.time_checkpoint_due, global_step);
  }
  // The summed gradients: out, or unsharded (2 ranks, shared memory) the window's slot, as in finish().
  const optim::Optimizer<float>::Vector grads(o.sum, shard_.count);
  ScopedTime t(time.compute, "optimizer");
  control_ = {o.loss_sum, o.control[0], o.control[1]};
  decode_control(r, step_samples);
  r.grad_norm = o.finite ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  if (o.finite && scaler_.enabled()) optim::scale_values<float>(grads, 1.0 / r.loss_scale);
  // Note [norm only when wanted]; the exponents found NaN/Inf already.
  if (o.finite && (clip_ > 0 || step_is_logged(global_step + 1, log_every_, total_steps_)))
    r.grad_norm = invariant_->norm(o.sum, shard);
  r.nonfinite = !std::isfinite(r.loss) || !std::isfinite(r.grad_norm);
  if (!scaler_.update(r.nonfinite)) {
    r.applied = false;
    if (sharded()) collective_->skip_all_gather();
    return r;
  }
  const double coef = clip_ / (r.grad_norm + 1e-6);  // clip_grad_norm's rule, with the agreed norm
  if (clip_ > 0 && coef < 1.0) optim::scale_values<float>(grads, coef);
  const optim::Optimizer<float>::Vector params(store.params().data() + shard_.offset, shard_.count);
  // Note [gradient zeroing in the update]: only the store's own buffer.
  const bool zero_in_update = o.sum == store.grads().data();
  optimizer_.step(params, grads, schedule_.at(global_step), zero_in_update);
  grads_zeroed_ = zero_in_update;
  if (ema_) ema_->update(params);
  fence();
  if (sharded()) {
    ScopedTime tg(time.comm, "allgather");
    collective_->all_gather(store.params().data(), shard_, global_step);
  }
  nn::parameters_written();  // Note [parameter generation]
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
  // The slices are contiguous in rank order, so their concatenation on rank 0 is the whole buffer.
  const auto gather = [&](const View1<float>& slice, const View1<float>* full) {
    const auto slice_host = to_host(slice);
    const std::vector<float> all = comm_.gather_to_root(std::vector<float>(slice_host.data(),
                                                                           slice_host.data() + shard_.count));
    if (!full) return;
    auto full_host = Kokkos::create_mirror_view(*full);
    std::copy(all.begin(), all.end(), full_host.data());
    Kokkos::deep_copy(*full, full_host);
  };
  gather(optimizer_.first_moment(), full_state_ ? &full_state_->first_moment() : nullptr);
  // Every rank alike (an empty slice too: a rank_invariant shard may hold no block).
  if (optimizer_config_.kind == "adamw")
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

std::vector<float> StepRunner::ema_values(bool everywhere) {
  if (!ema_) return {};
  fence();
  const auto host = to_host(ema_->shadow());
  std::vector<float> local(host.data(), host.data() + host.extent(0));
  if (!sharded()) return local;
  // The slices are contiguous in rank order: their concatenation is the whole buffer.
  std::vector<float> all = comm_.gather_to_root(local);
  if (everywhere) {
    all.resize(model_.store().count());
    comm_.broadcast(all.data(), all.size());
  }
  return all;
}

std::string StepRunner::ema_loaded(const std::vector<float>& whole, std::uint64_t updates) {
  if (!ema_) return whole.empty() ? "" : "resume: the checkpoint's EMA of the weights is dropped (ema_decay 0)";
  if (whole.empty()) {
    ema_->reset(optim::WeightEma::Vector(model_.store().params().data() + shard_.offset, shard_.count));
    return "resume: the checkpoint holds no EMA of the weights; it starts at the restored weights";
  }
  ema_->load(whole.data() + shard_.offset, updates);
  return "";
}

void StepRunner::use_ema_weights(bool on) {
  if (!ema_) return;
  const View1<float>& params = model_.store().params();
  if (on) {
    trained_params_ = View1<float>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "trained_params"),
                                   params.extent(0));
    Kokkos::deep_copy(trained_params_, params);
    if (!sharded()) {
      Kokkos::deep_copy(params, ema_->shadow());
    } else {
      const std::vector<float> all = ema_values(true);
      auto host = Kokkos::create_mirror_view(params);
      std::copy(all.begin(), all.end(), host.data());
      Kokkos::deep_copy(params, host);
    }
  } else {
    Kokkos::deep_copy(params, trained_params_);
    trained_params_ = View1<float>();
  }
  fence();
  nn::parameters_written();  // Note [parameter generation]
}

}  // namespace hpct
