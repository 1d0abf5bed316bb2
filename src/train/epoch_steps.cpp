// The epoch loop `train` and the in-situ sessions share (see epoch_steps.hpp).
#include "train/epoch_steps.hpp"

#include <cmath>
#include <limits>

#include "core/log.hpp"
#include "core/trace.hpp"
#include "data/field.hpp"

namespace hpct {

double EpochTally::mean_loss() const {
  return loss_count > 0 ? loss_sum / static_cast<double>(loss_count) : std::numeric_limits<double>::quiet_NaN();
}

void EpochSteps::stage(EpochRows& rows, std::uint64_t epoch) {
  loop_.beat("loading the epoch's data");
  long long bad = kNoBadValue;
  {
    ScopedTime t(time_.io, "data");
    comm_.run_agreed([&] { bad = rows.load(epoch); });
    bad = comm_.min(bad);
  }
  if (bad != kNoBadValue) comm_.agree(rows.describe_bad(bad), ExitCode::bad_input);
}

bool EpochSteps::run(const EpochRows& rows, const EpochOrder& sampler, std::uint64_t epoch,
                     std::uint64_t first_step, EpochTally& tally, TrainSummary& s, const EpochHooks& hooks) {
  const std::uint64_t steps = sampler.steps_per_epoch();
  const int accumulation = sampler.accumulation();
  for (std::uint64_t step = first_step; step < steps; ++step) {
    trace::Scope step_trace("step");
    loop_.beat("a training step");
    const RoundFlags flags = loop_.local_flags();  // agreed in the step's control reduction
    const StepControl control{flags.stop, flags.time_due};
    const std::uint64_t n_step = sampler.step_samples(step);
    auto micro_batch = [&](int k, Batch& b) {
      if (rows.count(step, k) == 0) return false;
      rows.fill(b, step, k);
      b.epoch = epoch;
      // The micro-batch after this one, in this epoch, for the model's loader thread.
      const bool same_step = k + 1 < accumulation && rows.count(step, k + 1) > 0;
      if (same_step || (step + 1 < steps && rows.count(step + 1, 0) > 0)) {
        Batch next;
        rows.fill(next, same_step ? step : step + 1, same_step ? k + 1 : 0);
        next.epoch = epoch;
        model_.prefetch(next);
      }
      return true;
    };
    const StepOutcome r = steps_.run(tally.global_step, n_step, accumulation, control, micro_batch, time_);
    if (!r.applied) {
      // Every rank sees the same reduced outcome, so all take the same branch.
      const std::string what = strf("%s at step %llu (epoch %llu)",
                                    std::isfinite(r.loss) ? "gradient norm is NaN/Inf" : "loss is NaN/Inf",
                                    (unsigned long long)tally.global_step + 1, (unsigned long long)epoch + 1);
      if (steps_.scaler().enabled()) {
        hooks.log(what + strf(": step skipped, fp16 loss scale lowered to %g", steps_.scaler().scale()));
      } else if (!config_.skip_nonfinite) {
        hooks.nonfinite_stop(what, epoch, step);
        throw Error("internal: nan_policy stop returned");  // the hook throws on every rank
      } else {
        hooks.log(what + strf(": step skipped (nan_policy skip; %llu skipped so far)",
                              (unsigned long long)tally.skipped_steps + 1));
      }
      ++tally.skipped_steps;
    } else {
      tally.loss_sum += r.loss;
      ++tally.loss_count;
    }
    ++tally.global_step;
    s.samples += n_step;
    ++s.steps;
    if (hooks.after_step) hooks.after_step(tally.global_step, epoch, r, n_step);
    if (r.stop) {
      s.stop_signal = RunLoop::stop_signal_seen();
      if (loop_.checkpoints()) s.last_checkpoint = hooks.checkpoint(epoch, step + 1);
      return false;
    }
    if (loop_.checkpoint_due(tally.global_step, RoundFlags{false, r.checkpoint_due}, step + 1 == steps))
      s.last_checkpoint = hooks.checkpoint(epoch, step + 1);
  }
  return true;
}

}  // namespace hpct
