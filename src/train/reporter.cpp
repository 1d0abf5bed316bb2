// Progress lines, epoch lines, the summary and the metrics records (see reporter.hpp).
#include "train/reporter.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/log.hpp"

namespace hpct {

std::string hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  return strf("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

Reporter::Reporter(const TrainConfig& config, const Comm& comm, bool resumed, std::uint64_t total_steps,
                   std::uint64_t first_global_step, std::vector<double> epoch_cost)
    : config_(config),
      total_steps_(total_steps),
      first_global_step_(first_global_step),
      epoch_cost_(std::move(epoch_cost)) {
  comm.run_agreed([&] {
    metrics_ = std::make_unique<MetricsSink>(config.metrics_file, comm.rank(), resumed, config.tensorboard_dir);
  });
}

double steps_work(const std::vector<double>& epoch_cost, std::uint64_t steps_per_epoch, std::uint64_t step) {
  if (epoch_cost.empty()) return static_cast<double>(step);
  double work = 0;
  for (std::uint64_t e = 0; e < epoch_cost.size() && e * steps_per_epoch < step; ++e)
    work += epoch_cost[e] * static_cast<double>(std::min(step - e * steps_per_epoch, steps_per_epoch));
  return work;
}

double Reporter::work_before(std::uint64_t step) const {
  const std::uint64_t per_epoch = epoch_cost_.empty() ? 1 : total_steps_ / epoch_cost_.size();
  return steps_work(epoch_cost_, per_epoch, step);
}

void Reporter::step(std::uint64_t global_step, std::uint64_t epoch, const StepOutcome& r, double lr,
                    std::uint64_t step_samples) {
  window_samples_ += step_samples;
  if (global_step == first_global_step_ + 1) sample_device_memory();          // the step's buffers all exist now
  if (!step_is_logged(global_step, config_.log_every, total_steps_)) return;  // the step runner's rule too
  sample_device_memory();
  const double rate = static_cast<double>(window_samples_) / window_.seconds();
  const double eta = run_clock_.seconds() / (work_before(global_step) - work_before(first_global_step_)) *
                     (work_before(total_steps_) - work_before(global_step));
  const std::string scale = config_.precision == nn::Precision::fp16 ? strf("  scale %.0f", r.loss_scale) : "";
  Log::progress(strf("step %llu/%llu  epoch %llu/%llu  loss %.6f  lr %.3e%s  %.0f samples/s  ETA %s",
                     (unsigned long long)global_step, (unsigned long long)total_steps_,
                     (unsigned long long)epoch + 1, (unsigned long long)config_.epochs, r.loss, lr, scale.c_str(),
                     rate, hms(eta).c_str()),
                static_cast<double>(global_step) / static_cast<double>(total_steps_));
  metrics_->write("step", {{"step", double(global_step)},
                           {"epoch", double(epoch + 1)},
                           {"loss", r.loss},
                           {"lr", lr},
                           {"grad_norm", r.grad_norm},
                           {"loss_scale", r.loss_scale},
                           {"samples_per_s", rate}});
  window_.reset();
  window_samples_ = 0;
}

void Reporter::epoch(std::uint64_t epoch, std::uint64_t global_step, std::uint64_t steps, double train_loss,
                     bool has_validation, const EvalResult& val, std::uint64_t samples, double seconds,
                     const TimeSplit& time) {
  sample_device_memory();  // after validation
  const double rate = static_cast<double>(samples) / seconds;
  // The validation metrics the model declares, by name: those with a label in the line ("  val
  // loss = 0.123456  val acc = 0.8100  top-5 = 0.9900"), every one in the record ("val_<name>").
  std::string v;
  if (has_validation)
    for (const auto& [spec, value] : val.metrics)
      if (!spec.label.empty()) v += strf("  %s = %.*f", spec.label.c_str(), spec.decimals, value);
  Log::info(strf("Epoch %llu/%llu: avg loss = %.6f (%llu batches)%s  %.0f samples/s  %.2f s",
                 (unsigned long long)epoch + 1, (unsigned long long)config_.epochs, train_loss,
                 (unsigned long long)steps, v.c_str(), rate, seconds));
  std::vector<MetricsSink::Field> fields{{"epoch", double(epoch + 1)},
                                         {"step", double(global_step)},
                                         {"train_loss", train_loss},
                                         {"val_loss", val.loss}};
  for (const auto& [spec, value] : val.metrics)
    if (spec.name != "loss") fields.emplace_back("val_" + spec.name, value);
  fields.insert(fields.end(), {{"samples_per_s", rate},
                               {"seconds", seconds},
                               {"compute_s", time.compute},
                               {"comm_s", time.comm},
                               {"io_s", time.io}});
  metrics_->write("epoch", fields);
}

void Reporter::lr_dropped(std::uint64_t epoch, std::uint64_t global_step, double lr_before, double lr,
                          std::uint64_t patience) {
  Log::info(strf("  plateau: lr %.6g -> %.6g after epoch %llu (validation loss not improved for %llu epochs)",
                 lr_before, lr, (unsigned long long)epoch + 1, (unsigned long long)patience + 1));
  metrics_->write("plateau", {{"epoch", double(epoch + 1)},
                              {"step", double(global_step)},
                              {"lr_before", lr_before},
                              {"lr", lr}});
}

void Reporter::early_stop(std::uint64_t epoch, std::uint64_t global_step, std::uint64_t best_epoch,
                          double best_loss, std::uint64_t patience, double min_delta) {
  const std::string best = best_epoch > 0
                               ? strf("best epoch %llu (val loss %.6f)", (unsigned long long)best_epoch, best_loss)
                               : std::string("no epoch had a finite validation loss");
  Log::info(
      strf("Early stopping after epoch %llu/%llu: no improvement of the validation loss (min_delta %g) for "
           "%llu epochs (early_stopping_patience %llu); %s",
           (unsigned long long)epoch + 1, (unsigned long long)config_.epochs, min_delta,
           (unsigned long long)patience, (unsigned long long)patience, best.c_str()));
  metrics_->write("early_stop", {{"epoch", double(epoch + 1)},
                                 {"step", double(global_step)},
                                 {"best_epoch", double(best_epoch)},
                                 {"best_val_loss", best_loss},
                                 {"patience", double(patience)}});
}

void Reporter::summary(const TrainSummary& s, bool has_validation, double train_flops_per_sample,
                       const PeakFlops& peak) {
  const double other = std::max(0.0, s.seconds - s.time.total());
  auto pct = [&](double x) { return 100.0 * x / std::max(s.seconds, 1e-12); };
  const double rate = static_cast<double>(s.samples) / s.seconds;
  const std::string val = has_validation ? strf("final val loss %.6f", s.val.loss)
                                         : std::string("no validation data");
  Log::info(strf("Done: %llu steps, %llu samples in %.2f s = %.0f samples/s; %s", (unsigned long long)s.steps,
                 (unsigned long long)s.samples, s.seconds, rate, val.c_str()));
  Log::info(strf("  time (rank 0): compute %.2f s (%.0f%%), comm %.2f s (%.0f%%), io %.2f s (%.0f%%), other %.2f s",
                 s.time.compute, pct(s.time.compute), s.time.comm, pct(s.time.comm), s.time.io, pct(s.time.io),
                 other));
  if (s.read_s > 0)
    Log::info(strf("  data reads %.3f s, of which %.3f s hidden behind training by the loader thread", s.read_s,
                   s.hidden_read_s));
  const double model_flops_per_s = train_flops_per_sample * rate;
  const double mfu = peak.flops_per_s > 0 ? model_flops_per_s / peak.flops_per_s : 0.0;
  if (train_flops_per_sample > 0)
    Log::info(strf("  model FLOPs: %.3g per sample (forward + backward GEMMs), %.2f GFLOP/s over all ranks",
                   train_flops_per_sample, model_flops_per_s * 1e-9));
  if (train_flops_per_sample > 0 && mfu > 0)
    Log::info(strf("  MFU %.1f%% of %.1f GFLOP/s over all ranks (%s)", 100.0 * mfu, peak.flops_per_s * 1e-9,
                   peak.source.c_str()));
  Log::info("  " + describe_memory_peak(s.memory) + " (max over ranks)");
  if (s.skipped_steps > 0)
    Log::info(strf("  %llu step(s) skipped for NaN/Inf (nan_policy skip or fp16 loss scaling)",
                   (unsigned long long)s.skipped_steps));
  std::vector<MetricsSink::Field> fields{{"steps", double(s.steps)},
                                         {"samples", double(s.samples)},
                                         {"seconds", s.seconds},
                                         {"cpu_s", s.cpu_seconds},
                                         {"samples_per_s", rate},
                                         {"val_loss", s.val.loss},
                                         {"compute_s", s.time.compute},
                                         {"comm_s", s.time.comm},
                                         {"io_s", s.time.io},
                                         {"read_s", s.read_s},
                                         {"hidden_read_s", s.hidden_read_s},
                                         {"skipped_steps", double(s.skipped_steps)},
                                         {"train_flops_per_sample", train_flops_per_sample},
                                         {"peak_flops_per_s", peak.flops_per_s},
                                         {"mfu", mfu},
                                         {"peak_host_mib", s.memory.host_mib}};
  if (s.memory.device_mib >= 0) fields.push_back({"peak_device_mib", s.memory.device_mib});
  metrics_->write("summary", fields);
}

}  // namespace hpct
