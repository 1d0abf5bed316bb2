// NetworkTrainer's checkpoints: the run's state (model, optimizer, EMA, loss scale, sample position,
// best epoch) written after a pass or at a stop, and restored from the checkpoint `resume` chose.
#include "train/trainer.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "train/checkpoint.hpp"
#include "train/resume.hpp"

namespace hpct {

std::string NetworkTrainer::checkpoint(std::uint64_t epoch, std::uint64_t epoch_steps) {
  CheckpointState st = run_state(deck_, *model_, steps_->scaler(), config_.seed, comm_.size(),
                                 sampler_->global_batch());
  st.global_step = tally_.global_step;
  st.epoch = epoch;
  st.epoch_samples = std::min(sampler_->size(), epoch_steps * sampler_->global_batch());
  st.epoch_steps = tally_.loss_count;
  st.epoch_loss_sum = tally_.loss_sum;
  st.skipped_steps = tally_.skipped_steps;
  st.best_val_loss = best_.loss;
  st.best_epoch = best_.epoch;
  rules_.save(st);                // early stopping and lr_schedule plateau
  st.ema = steps_->ema_values();  // on rank 0, which writes (gathered there when sharded)
  st.ema_updates = steps_->ema() ? steps_->ema()->updates() : 0;
  ScopedTime t(time_.io, "checkpoint");
  // Note [rank 0 writes, all agree] (run_loop.hpp); with a sharded optimizer every rank takes part
  // in gathering its state on rank 0.
  const optim::Optimizer<float>& optimizer = steps_->optimizer_for_save();
  return loop_.checkpoint([&] {
    return write_checkpoint(config_.checkpoint_dir, config_.checkpoint_keep, st, model_->store(), optimizer);
  });
}

void NetworkTrainer::restore(const std::string& path) {
  CheckpointState st;
  comm_.run_agreed([&] {
    check_resume_deck(deck_, inspect_checkpoint(path));  // names the key that changed
    st = read_checkpoint(path, model_->store(), steps_->optimizer_for_load());
    steps_->optimizer_loaded();
    rules_.restore(st, path);
  });
  if (rules_.plateau()) steps_->set_plateau_lr(rules_.plateau()->lr());
  const std::string ema_note = steps_->ema_loaded(st.ema, st.ema_updates);
  if (!ema_note.empty()) Log::info(ema_note);
  ResumePoint p;
  comm_.run_agreed([&] { p = resume_point(path, st, sampler_->size(), sampler_->global_batch()); });
  resumed_from_ = path;
  start_epoch_ = p.epoch;
  start_step_ = p.step;
  tally_.loss_sum = p.epoch_loss_sum;
  tally_.loss_count = p.epoch_loss_count;
  tally_.global_step = st.global_step;
  tally_.skipped_steps = st.skipped_steps;
  best_.loss = st.best_val_loss;
  best_.epoch = st.best_epoch;
  check_best_output_on_resume(deck_, comm_, path, best_);
  steps_->scaler().restore(st.loss_scale, st.loss_scale_growth_tracker);
  const std::uint64_t g = sampler_->global_batch();
  if (st.global_batch != g)
    Log::info(
        strf("resume: global batch changed from %llu to %llu: training continues the same sample order "
             "with a different batch",
             (unsigned long long)st.global_batch, (unsigned long long)g));
  Log::info(
      strf("resume: from %s (step %llu, epoch %llu, sample %llu of the epoch; written by %llu rank(s), %s build)",
           path.c_str(), (unsigned long long)st.global_step, (unsigned long long)st.epoch + 1,
           (unsigned long long)st.epoch_samples, (unsigned long long)st.ranks, st.backend.c_str()));
}

}  // namespace hpct
