// One optimizer step, the same for every network model family:
//   zero gradients -> micro-batches accumulate gradients (normalised by the global step's sample
//   count and the loss scale) -> the gradient all-reduce: ONE of the flat buffer after backward
//   (bucket_mb 0), or bucket by bucket, started during backward of the last micro-step as the model
//   reports ranges final (comm/gradient_reducer.hpp) -> ONE small fp64 all-reduce of the control
//   values (loss sum, stop and checkpoint flags) -> unscale (fp16) -> clip -> non-finite check ->
//   loss-scaler update -> optimizer update.
// With optimizer_sharding (Note [optimizer sharding] in step.cpp) the gradient all-reduce becomes a
// reduce-scatter, each rank updates its slice, and an all-gather brings the parameters back.
// Every decision after the all-reduces uses values that are identical on all ranks, so all ranks
// reach it without further communication.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/gradient_collective.hpp"
#include "core/timer.hpp"
#include "models/model.hpp"
#include "optim/ema.hpp"
#include "optim/loss_scaler.hpp"
#include "optim/optimizer.hpp"
#include "train/config.hpp"
#include "train/rank_invariant.hpp"

namespace hpct {

// This rank's view of the stop conditions, summed over ranks by the control reduction.
struct StepControl {
  bool stop_requested = false;       // a stop signal arrived here
  bool time_checkpoint_due = false;  // rank 0's wall clock says a timed checkpoint is due
};

struct StepOutcome {
  double loss = 0;              // mean loss over the step's samples, all ranks
  double grad_norm = 0;         // global L2 norm before clipping (unscaled); 0 on finite steps that are not
                                // logged, without clipping (Note [norm only when wanted] in step.cpp)
  double loss_scale = 1;        // the scale this step ran with (1 unless fp16)
  bool stop = false;            // some rank received a stop signal
  bool checkpoint_due = false;  // the timed checkpoint cadence says so
  bool nonfinite = false;       // the loss or a gradient was NaN/Inf
  bool applied = true;          // the optimizer updated the parameters
};

// Whether the step that brings the count of steps taken to steps_taken writes a progress line and
// a metrics record (train/reporter.cpp): every log_every steps, and the last.
inline bool step_is_logged(std::uint64_t steps_taken, std::uint64_t log_every, std::uint64_t total_steps) {
  return log_every == 0 || steps_taken % log_every == 0 || steps_taken == total_steps;
}

// Whether grads (in the store's layout) hold no NaN or Inf: optim::all_finite's verdict, without
// reading the tensors whose recorded bounds prove them finite (Note [gradient bounds] in
// nn/gradient_bounds.hpp). Valid only while the bounds describe grads: since they were last reset
// on zeroed gradients, every backward into grads recorded.
bool gradients_finite(const nn::ParameterStore<float>& store, const optim::Optimizer<float>::Vector& grads);

class StepRunner {
 public:
  StepRunner(const TrainConfig& config, const Comm& comm, Model& model, std::uint64_t total_steps);
  ~StepRunner();  // removes the model's gradient-ready hook, which points here
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // micro_batch(k, batch) fills micro-step k's batch and returns false when this rank has no rows
  // in it (the tail of an epoch); the rank still joins the all-reduces.
  template <class MicroBatch>
  StepOutcome run(std::uint64_t global_step, std::uint64_t step_samples, int micro_steps,
                  const StepControl& control, MicroBatch&& micro_batch, TimeSplit& time) {
    double loss_sum = 0;
    {
      ScopedTime t(time.compute, "forward_backward");
      // Note [gradient zeroing in the update]: the last applied update may have zeroed them.
      if (!grads_zeroed_) model_.store().zero_grads();
      grads_zeroed_ = false;
      // The gradients are exactly zero here: the bounds start at 0 (Note [gradient bounds]).
      bounds_armed_ = prove_finite_ && micro_steps == 1;
      model_.store().track_gradient_bounds(bounds_armed_);
      if (bounds_armed_) model_.store().reset_gradient_bounds();
      const double normaliser = static_cast<double>(step_samples) / scaler_.scale();
      if (invariant_) run_chunks(micro_steps, normaliser, micro_batch);
      for (int k = 0; k < micro_steps && !invariant_; ++k) {
        Batch b;
        if (!micro_batch(k, b)) {
          if (model_.collective_step()) loss_sum += model_.accumulate_gradients(Batch{}, normaliser);
          continue;
        }
        // Earlier micro-steps only accumulate: their reports start no communication.
        const bool last = k + 1 == micro_steps;
        if (last) arm_reducers(true);
        loss_sum += model_.accumulate_gradients(b, normaliser);
        if (last) arm_reducers(false);
      }
      fence();
    }
    return finish(loss_sum, global_step, step_samples, control, time);
  }

  double lr(std::uint64_t global_step) const { return schedule_.at(global_step); }
  // lr_schedule plateau: the rate after warmup from now on (optim/plateau.hpp).
  void set_plateau_lr(double lr) { schedule_.plateau_lr = lr; }
  // Over this rank's shard only when the optimizer is sharded.
  optim::Optimizer<float>& optimizer() { return optimizer_; }
  bool sharded() const { return !shard_.counts.empty(); }
  // Checkpoints hold the whole buffer's optimizer state. Saving: every rank calls this (sharded, it
  // gathers the slices on rank 0, a collective); rank 0 writes the result. Loading: read into
  // optimizer_for_load() on every rank, then call optimizer_loaded() (each rank keeps its slice).
  const optim::Optimizer<float>& optimizer_for_save();
  optim::Optimizer<float>& optimizer_for_load();
  void optimizer_loaded();
  optim::LossScaler& scaler() { return scaler_; }
  // The EMA of the weights (optim/ema.hpp), over this rank's shard when sharded; null without ema_decay.
  const optim::WeightEma* ema() const { return ema_.get(); }
  // The whole EMA on the host, in the store's layout (empty without one). Every rank calls it
  // (sharded, the slices are gathered: a collective); the values are on rank 0 only, or on every
  // rank with `everywhere`.
  std::vector<float> ema_values(bool everywhere = false);
  // After a checkpoint was read into the store: restores the EMA it holds (its whole buffer, on every
  // rank; each rank keeps its slice), or, from a checkpoint without one, starts the EMA at the
  // restored weights. Returns what happened, for the log ("" when the run keeps no EMA).
  std::string ema_loaded(const std::vector<float>& whole, std::uint64_t updates);
  // Puts the EMA into the store's parameters (on) or the trained weights back (off); every rank
  // calls both (a collective when sharded). Nothing without an EMA.
  void use_ema_weights(bool on);
  // The bucketed reducer; null with bucket_mb 0, on one rank or on another backend than MPI.
  const GradientReducer* gradient_reducer() const { return collective_->buckets(); }
  // "nccl", "shm" or "mpi": the backend of the gradient all-reduce.
  const char* comm_backend() const { return collective_->backend(); }

 private:
  // rank_invariant: the step's chunks (micro-step k is chunk k), fused where the model allows
  // (Note [rank invariance] and Note [fused chunks] in train/rank_invariant.cpp).
  template <class MicroBatch>
  void run_chunks(int micro_steps, double normaliser, MicroBatch& micro_batch) {
    invariant_->begin_step();
    const int fuse = invariant_->fused();
    for (int k = 0; k < micro_steps; k += fuse) {
      const int count = std::min(fuse, micro_steps - k);
      Batch b;
      if (count > 1 && join_chunks(micro_batch, k, count, chunk_, b)) {
        invariant_->before_fused(k, count, static_cast<int>(chunk_));
        invariant_->arm(k + count == micro_steps);
        model_.accumulate_chunk_gradients(b, normaliser, static_cast<int>(chunk_), chunk_losses_.data());
        invariant_->arm(false);
        invariant_->after_fused(k, count, chunk_losses_.data());
        continue;
      }
      for (int i = k; i < k + count; ++i) {  // one micro-batch per chunk
        if (!micro_batch(i, b)) continue;
        invariant_->before_chunk();
        invariant_->arm(i + 1 == micro_steps);
        const double loss = model_.accumulate_gradients(b, normaliser);
        invariant_->arm(false);
        invariant_->after_chunk(i, loss);
      }
    }
  }

  // Brackets backward of the last micro-step: the overlapped reducers act on ready reports only then.
  void arm_reducers(bool on);
  StepOutcome finish(double loss_sum, std::uint64_t global_step, std::uint64_t step_samples,
                     const StepControl& control, TimeSplit& time);
  StepOutcome finish_sharded(StepOutcome r, std::uint64_t global_step, std::uint64_t step_samples, TimeSplit& time);
  // rank_invariant: the fixed-point sum of the chunks, then the update (sharded or not).
  StepOutcome finish_invariant(StepOutcome r, std::uint64_t global_step, std::uint64_t step_samples,
                               const StepControl& control, TimeSplit& time);
  // The summed control values: the mean loss and the flags.
  void decode_control(StepOutcome& r, std::uint64_t step_samples) const;
  const Comm& comm_;
  Model& model_;
  optim::OptimizerConfig optimizer_config_;
  ParameterShard shard_;
  View1<float> shard_grads_;           // sharded: this rank's slice of the summed gradients
  optim::Optimizer<float> optimizer_;  // over shard_ only
  optim::Schedule schedule_;
  optim::LossScaler scaler_;
  double clip_;
  std::uint64_t log_every_, total_steps_;  // Note [norm only when wanted]
  // Note [gradient bounds]: one rank, no loss scaler, no clipping (which computes the norm anyway),
  // a host build; armed for a step of one micro-step.
  bool prove_finite_ = false, bounds_armed_ = false;
  bool grads_zeroed_ =
      false;  // the last update set the store's gradients to 0 (Note [gradient zeroing in the update])
  std::array<double, 3> control_{};                      // loss sum, stop, time checkpoint: summed over ranks
  double norm_sq_ = 0;                                   // sharded: squared gradient norm, summed over ranks
  std::unique_ptr<optim::Optimizer<float>> full_state_;  // sharded: whole-buffer state for checkpoints
  std::unique_ptr<GradientCollective> collective_;       // every exchange of the step, any backend
  std::unique_ptr<optim::WeightEma> ema_;                // over shard_ only
  View1<float> trained_params_;                          // the trained weights while the EMA's are in the store
  std::unique_ptr<FixedPointSum> invariant_;             // rank_invariant only
  std::uint64_t chunk_ = 0;                              // rank_invariant: samples per chunk
  std::vector<double> chunk_losses_;                     // rank_invariant: a fused micro-batch's chunks
};

}  // namespace hpct
