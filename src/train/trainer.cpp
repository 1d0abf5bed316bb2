// Network training around the shared epochs (epoch_steps.hpp) and the pieces only it composes:
// model, validation, outputs (see trainer.hpp); its rows and their checks in trainer_data.cpp, its
// checkpoints in trainer_checkpoints.cpp.
#include "train/trainer.hpp"

#include <cmath>
#include <cstring>

#include "core/log.hpp"
#include "core/trace.hpp"
#include "models/registry.hpp"
#include "nn/loss.hpp"
#include "nn/weights_io.hpp"
#include "train/data_stats.hpp"
#include "train/rank_invariant.hpp"
#include "train/resume.hpp"
#include "train/row_weights.hpp"
#include "train/table_inputs.hpp"

namespace hpct {

namespace {

// A hash of the parameter bits: ranks compare it to prove they start from the same model.
std::uint64_t parameter_fingerprint(const View1<float>& params) {
  auto h = to_host(params);
  std::uint64_t acc = 1469598103934665603ull;
  for (std::size_t i = 0; i < h.extent(0); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &h(i), sizeof(bits));
    acc = (acc ^ bits) * 1099511628211ull;
  }
  return acc;
}

// The configuration of a network trained inside another run: no files of its own but its weights.
TrainConfig inner_config(const deck::Deck& deck, const std::string& output) {
  TrainConfig c = TrainConfig::from_deck(deck);
  c.validation_file.clear();
  c.validation_fraction = 0;
  c.checkpoint_dir.clear();
  c.resume = "none";
  c.metrics_file.clear();
  c.tensorboard_dir.clear();
  c.output = output;
  c.best_output.clear();
  return c;
}

}  // namespace

NetworkTrainer::NetworkTrainer(const deck::Deck& deck, const Comm& comm)
    : NetworkTrainer(deck, TrainConfig::from_deck(deck), comm, nullptr) {}

NetworkTrainer::NetworkTrainer(const deck::Deck& deck, const Comm& comm, std::shared_ptr<const Dataset> rows,
                               const std::string& output)
    : NetworkTrainer(deck, inner_config(deck, output), comm, std::move(rows)) {}

NetworkTrainer::NetworkTrainer(const deck::Deck& deck, TrainConfig config, const Comm& comm,
                               std::shared_ptr<const Dataset> rows)
    : deck_(deck), config_(std::move(config)), comm_(comm), loop_(comm, Cadence(config_)), rules_(config_) {
  if (rows) {
    const std::string key = key_needing_validation();  // a member trains without validation rows
    if (!key.empty()) comm.run_agreed([&] { no_validation_split(key); });
    if (has_row_weights(*rows) && deck_.get_string("model") != "mlp")  // as check_weighable
      comm.run_agreed([&] {
        deck_.fail("model",
                   "weighted rows train model mlp; model " + deck_.get_string("model") + " weighs every row alike");
      });
    remember_table(encode_table_data(deck_, rows, val_data_, comm_));  // rows encoded in memory, if any
    val_data_ = row_range(rows, rows->rows(), 0);
    comm.agree(rows->rows() == 0 ? rows->description() + ": no rows to train on" : "", ExitCode::bad_input);
    train_data_ = std::move(rows);
  } else {
    open_data();
  }
  weigh_classes();
  if (has_row_weights(*train_data_))
    Log::info("  " + train_data_->description() +
              ": rows weighted (step loss sum w l / B, validation metrics sum w l / sum w)");
  // rank_invariant: micro-batches of one chunk each (Note [rank invariance] in train/rank_invariant.cpp).
  MicroBatching batching;
  comm.run_agreed([&] { batching = resolve_micro_batching(deck_, config_, comm.size()); });
  micro_batch_ = batching.rows;
  sampler_ = std::make_unique<EpochOrder>(train_data_->rows(), batching.rows, comm.size(), batching.count,
                                          config_.seed, config_.shuffle);
  build_model();
  comm.run_agreed([&] {
    steps_ = std::make_unique<StepRunner>(config_, comm, *model_, sampler_->steps_per_epoch() * config_.epochs);
  });
  shard_ = std::make_unique<EpochShard>(train_data_, specs_, *sampler_, comm.rank(), shard_options(deck),
                                        train_part_);
  epochs_ = std::make_unique<EpochSteps>(comm, config_, *steps_, *model_, loop_, time_);
  // rank_invariant: validation in chunks too (Notes [rank-invariant validation], [fused validation]).
  evaluator_ = std::make_unique<Evaluator>(val_data_, comm, micro_batch_, config_.top_k, specs_,
                                           config_.rank_invariant ? config_.rank_invariant_chunk : 0,
                                           config_.rank_invariant_val_fused, val_part_);
  check_validation_rows();
  const std::string path = config_.resume == "none" ? std::string() : choose_checkpoint(deck, comm);
  if (!path.empty()) restore(path);
}

void NetworkTrainer::build_model() {
  comm_.run_agreed([&] {
    specs_ = train_data_->fields();
    const std::vector<FieldSpec> val = val_data_->fields();  // a validation_file may hold longer rows
    for (std::size_t f = 0; f < specs_.size(); ++f)
      specs_[f].max_row_elements = std::max(specs_[f].max_row_elements, val[f].max_row_elements);
    ModelBuildContext ctx(deck_, specs_, static_cast<int>(micro_batch_), config_.precision);
    ctx.category_rows = embedding_rows_;
    ctx.unscaled_inputs = unscaled_inputs_;
    ctx.table_inputs = table_inputs_;
    ctx.allreduce_sum = [this](double* v, int count) { comm_.allreduce_sum(v, static_cast<std::size_t>(count)); };
    model_ = make_model(ctx);
    // Notes [fused chunks] (rank_invariant.cpp), [fused validation] (evaluator.cpp): chunks of batch_size rows.
    if (config_.rank_invariant && config_.rank_invariant_fuse && kHostBackend && model_->evaluates_rows_alone() &&
        config_.batch_size > micro_batch_) {
      ctx.capacity = static_cast<int>(config_.batch_size);
      model_ = make_model(ctx);
      config_.rank_invariant_val_fused = static_cast<int>(config_.batch_size / micro_batch_);
      if (model_->rows_independent()) config_.rank_invariant_fused = config_.rank_invariant_val_fused;
      Log::info(strf("  rank_invariant: %d chunks per %s", config_.rank_invariant_val_fused,
                     model_->rows_independent() ? "micro-batch (the model's rows are independent)"
                                                : "validation micro-batch (training: one per chunk)"));
    }
    model_->constrain_fields(specs_);
  });
  // Models that normalise their data get the training part's statistics (reduced over ranks).
  if (model_->needs_data_stats())
    model_->set_data_stats(compute_data_stats(*train_data_, comm_, model_->data_stats_request(),
                                              config_.rank_invariant));
  comm_.run_agreed([&] {
    if (config_.init_weights.empty() || !model_->fitted_state_from(config_.init_weights))
      model_->fit_to_data(*train_data_);
    // The validation rows must be made as the training rows were (diffusion: Note [anomaly targets]).
    if (!config_.validation_file.empty()) {
      try {
        model_->check_data_file(config_.validation_file);
      } catch (const Error& e) {
        throw Error(std::string("validation_file ") + e.what(), e.code());
      }
    }
  });
  comm_.run_agreed([&] {
    if (config_.init_weights.empty()) model_->store().initialize(config_.seed);
    else nn::read_weights(config_.init_weights, model_->store());
  });
  const std::uint64_t fp = parameter_fingerprint(model_->store().params());
  comm_.agree(comm_.min(fp) != comm_.max(fp) ? "initial parameters differ between ranks (fingerprint mismatch)"
                                             : "",
              ExitCode::failure);
}

EpochHooks NetworkTrainer::epoch_hooks(Reporter& reporter) {
  EpochHooks h;
  h.after_step = [this, &reporter](std::uint64_t global_step, std::uint64_t epoch, const StepOutcome& r,
                                   std::uint64_t step_samples) {
    if (step_hook_) step_hook_(global_step);
    reporter.step(global_step, epoch, r, steps_->lr(global_step - 1), step_samples);
  };
  h.checkpoint = [this](std::uint64_t epoch, std::uint64_t steps) { return checkpoint(epoch, steps); };
  h.nonfinite_stop = [this](const std::string& what, std::uint64_t epoch, std::uint64_t step) {
    // The parameters are still the last good ones: save them before stopping.
    const std::string saved = loop_.checkpoints() ? "; last good state saved in " + checkpoint(epoch, step)
                                                  : std::string();
    comm_.agree(what + saved + " (nan_policy stop; lower lr or set clip_grad_norm)", ExitCode::failure);
  };
  h.log = [](const std::string& line) { Log::info(line); };
  return h;
}

TrainSummary NetworkTrainer::run() {
  const std::uint64_t steps = sampler_->steps_per_epoch();
  std::vector<double> epoch_cost(config_.epochs);
  for (std::uint64_t e = 0; e < config_.epochs; ++e) epoch_cost[e] = model_->step_cost(e);
  Reporter reporter(config_, comm_, !resumed_from_.empty(), steps * config_.epochs, tally_.global_step,
                    std::move(epoch_cost));
  const EpochHooks hooks = epoch_hooks(reporter);
  TrainSummary s;
  Stopwatch run_clock;
  const double cpu_start = process_cpu_seconds();
  std::uint64_t first_epoch = start_epoch_;
  if (rules_.early_stopping().stopped()) {  // Note [early stopping]: the checkpoint's run had stopped
    Log::info(strf(
        "  early stopping: the checkpoint's run had stopped (%llu epochs without improvement, "
        "early_stopping_patience %llu): nothing left to train",
        (unsigned long long)rules_.early_stopping().wait, (unsigned long long)config_.early_stopping_patience));
    first_epoch = config_.epochs;
  }
  for (std::uint64_t epoch = first_epoch; epoch < config_.epochs; ++epoch) {
    trace::Scope epoch_trace("epoch");
    Stopwatch epoch_clock;
    epochs_->stage(*shard_, epoch);
    if (epoch == start_epoch_) check_training_rows();
    if (epoch != start_epoch_) tally_.start_epoch();
    const std::uint64_t samples_before = s.samples;
    if (!epochs_->run(*shard_, *sampler_, epoch, epoch == start_epoch_ ? start_step_ : 0, tally_, s, hooks)) {
      s.seconds = run_clock.seconds();
      s.cpu_seconds = process_cpu_seconds() - cpu_start;
      s.time = time_;
      s.skipped_steps = tally_.skipped_steps;
      return s;
    }
    s.last_epoch_loss = tally_.mean_loss();
    beat("validation and the end of the epoch");
    {
      ScopedTime t(time_.compute, "validation");
      s.val = validate();
      s.val_loss = s.val.loss;
    }
    reporter.epoch(epoch, tally_.global_step, steps, s.last_epoch_loss, evaluator_->rows() > 0, s.val,
                   s.samples - samples_before, epoch_clock.seconds(), time_);
    keep_if_best(epoch, s.val_loss);  // before the epoch's checkpoint (Note [best epoch])
    const bool stop = apply_validation_rules(epoch, s.val_loss, reporter);
    if (loop_.checkpoint_due_after_pass(epoch, tally_.global_step, stop || epoch + 1 == config_.epochs))
      s.last_checkpoint = checkpoint(epoch, steps);
    if (stop) {
      s.early_stopped_after = epoch + 1;
      break;
    }
  }
  s.seconds = run_clock.seconds();
  s.cpu_seconds = process_cpu_seconds() - cpu_start;
  s.skipped_steps = tally_.skipped_steps;
  {
    ScopedTime t(time_.io, "output");
    write_outputs();
  }
  s.time = time_;
  s.read_s = shard_->read_seconds();
  s.hidden_read_s = shard_->hidden_read_seconds();
  s.memory = memory_peak();
  s.memory.host_mib = comm_.max(s.memory.host_mib);
  s.memory.device_mib = comm_.max(s.memory.device_mib);
  PeakFlops peak;
  if (model_->train_flops_per_sample() > 0) {
    peak = rank_peak_flops(config_.precision);  // every rank at once, as they trained
    peak.flops_per_s = comm_.sum(peak.flops_per_s);
  }
  reporter.summary(s, evaluator_->rows() > 0, model_->train_flops_per_sample(), peak);
  return s;
}

EvalResult NetworkTrainer::validate() {
  // validation_weights ema: the EMA's weights, put into the store for the evaluation only.
  const bool ema = config_.validate_with_ema && steps_->ema();
  if (ema) steps_->use_ema_weights(true);
  EvalResult r = evaluator_->evaluate(*model_);
  if (ema) steps_->use_ema_weights(false);
  return r;
}

void NetworkTrainer::keep_if_best(std::uint64_t epoch, double val_loss) {
  if (!best_.improved_by(val_loss)) return;
  best_ = BestEpoch{epoch + 1, val_loss};
  if (config_.best_output.empty()) return;
  ScopedTime t(time_.io, "output");
  nn::Attributes attrs = best_epoch_attributes(best_);
  for (const auto& [k, v] : table_attributes()) attrs[k] = v;
  write_run_weights(comm_, config_.best_output, deck_, *model_, *steps_, attrs);
  Log::info(strf("  best epoch so far %llu (val loss %.6f): weights written to %s", (unsigned long long)best_.epoch,
                 best_.loss, config_.best_output.c_str()));
}

bool NetworkTrainer::apply_validation_rules(std::uint64_t epoch, double val_loss, Reporter& reporter) {
  const ValidationRules::Verdict v = rules_.after_epoch(val_loss);
  if (v.lr_dropped) {
    steps_->set_plateau_lr(rules_.plateau()->lr());
    reporter.lr_dropped(epoch, tally_.global_step, v.lr_before, rules_.plateau()->lr(), config_.plateau.patience);
  }
  if (v.stop)
    reporter.early_stop(epoch, tally_.global_step, best_.epoch, best_.loss, config_.early_stopping_patience,
                        config_.early_stopping_min_delta);
  return v.stop;
}

void NetworkTrainer::write_outputs() {
  if (!config_.output.empty()) {
    write_run_weights(comm_, config_.output, deck_, *model_, *steps_, table_attributes());
    Log::info("  weights written to " + config_.output);
  }
  if (!config_.best_output.empty() && best_.epoch > 0)
    Log::info(strf("  best epoch %llu (val loss %.6f): its weights are in %s", (unsigned long long)best_.epoch,
                   best_.loss, config_.best_output.c_str()));
}

int run_network_training(const deck::Deck& deck, const Comm& comm) {
  NetworkTrainer trainer(deck, comm);
  const EpochOrder& smp = trainer.sampler();
  const TrainConfig& c = trainer.config();
  Log::info(strf("  model %s: %s, %llu parameters, precision %s", trainer.model().family().c_str(),
                 clip_for_log(trainer.model().config_string(), 200).c_str(),
                 (unsigned long long)trainer.model().store().count(), nn::precision_name(c.precision)));
  Log::info(strf("  data %s: %llu training rows, %llu validation rows", c.data_file.c_str(),
                 (unsigned long long)smp.size(), (unsigned long long)trainer.validation_rows()));
  Log::info(strf(
      "  effective global batch %llu = %llu per rank x %d ranks x %d accumulation steps; "
      "%llu steps per epoch (last step %llu samples)",
      (unsigned long long)smp.global_batch(), (unsigned long long)c.batch_size, comm.size(), c.accumulation_steps,
      (unsigned long long)smp.steps_per_epoch(), (unsigned long long)smp.step_samples(smp.steps_per_epoch() - 1)));
  // What a program embedding the trainer would keep for itself (run_loop.hpp).
  ProgramGuard guard(comm, c.watchdog_timeout);
  trainer.set_heartbeat(&guard.heartbeat());
  const TrainSummary s = trainer.run();
  if (s.stop_signal != 0)
    return RunLoop::stopped(s.stop_signal, strf("at step %llu", (unsigned long long)s.steps), s.last_checkpoint);
  return 0;
}

}  // namespace hpct
