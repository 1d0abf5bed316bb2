// The reduction and update half of an optimizer step (see step.hpp).
#include "train/step.hpp"

#include <cmath>

#include "core/log.hpp"

namespace hpct {

namespace {
View1<std::uint8_t> decay_mask(const TrainConfig& config, const nn::ParameterStore<float>& store) {
  if (config.decay_all_parameters) return {};
  return store.decay_mask();
}

std::vector<GradientBucket> buckets_of(const TrainConfig& config, const nn::ParameterStore<float>& store) {
  std::vector<std::uint64_t> offsets;
  for (const auto& t : store.tensors()) offsets.push_back(t.offset);
  const double bytes = config.bucket_mb * 1024.0 * 1024.0;
  return plan_gradient_buckets(offsets, store.count(), bytes, GradientReducer::kFirstBucketBytes);
}
}  // namespace

StepRunner::StepRunner(const TrainConfig& config, const Comm& comm, Model& model, std::uint64_t total_steps)
    : model_(model),
      reducer_(comm, config.watchdog_timeout),
      optimizer_(config.optimizer, model.store().count(), decay_mask(config, model.store())),
      schedule_(config.schedule),
      scaler_(config.precision == nn::Precision::fp16, config.loss_scale_init, config.loss_scale_growth_interval),
      clip_(config.clip_grad_norm) {
  schedule_.total_steps = total_steps;
  if (comm.size() > 1 && config.bucket_mb > 0) {
    buckets_ = std::make_unique<GradientReducer>(reducer_, model.store().grads().data(),
                                                 buckets_of(config, model.store()), config.overlap_allreduce);
    // Installed once: the hook is called from the layers every step and must not allocate.
    if (config.overlap_allreduce) {
      GradientReducer* b = buckets_.get();
      model_.set_gradient_ready_hook([b](std::uint64_t offset, std::uint64_t count) { b->on_ready(offset, count); });
    }
    const auto& plan = buckets_->buckets();
    Log::info(strf("  gradient all-reduce: %zu bucket(s) of %llu floats in all (the first %llu), %s", plan.size(),
                   (unsigned long long)model.store().count(), (unsigned long long)plan.front().count,
                   config.overlap_allreduce ? "started during backward of the last micro-step" : "after backward"));
  }
}

StepRunner::~StepRunner() {
  if (buckets_ && buckets_->overlap()) model_.set_gradient_ready_hook(nullptr);
}

StepOutcome StepRunner::finish(double loss_sum, std::uint64_t global_step, std::uint64_t step_samples,
                               const StepControl& control, TimeSplit& time) {
  auto& store = model_.store();
  StepOutcome r;
  r.loss_scale = scaler_.scale();
  control_ = {loss_sum, control.stop_requested ? 1.0 : 0.0, control.time_checkpoint_due ? 1.0 : 0.0};
  {
    ScopedTime t(time.comm, "allreduce");
    if (buckets_) {
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
  const auto grads = store.grad_span();
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

}  // namespace hpct
