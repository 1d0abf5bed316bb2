// Network training around the shared epochs (epoch_steps.hpp) and the pieces only it composes:
// data, model, validation, outputs (see trainer.hpp); its checkpoints in trainer_checkpoints.cpp.
#include "train/trainer.hpp"

#include <cmath>
#include <cstring>

#include "core/log.hpp"
#include "core/trace.hpp"
#include "data/source_registry.hpp"
#include "data/validation_split.hpp"
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
  shard_ = std::make_unique<EpochShard>(train_data_, specs_, *sampler_, comm.rank(), shard_options(deck));
  epochs_ = std::make_unique<EpochSteps>(comm, config_, *steps_, *model_, loop_, time_);
  // rank_invariant: validation in chunks too (Notes [rank-invariant validation], [fused validation]).
  evaluator_ = std::make_unique<Evaluator>(val_data_, comm, micro_batch_, config_.top_k, specs_,
                                           config_.rank_invariant ? config_.rank_invariant_chunk : 0,
                                           config_.rank_invariant_val_fused);
  check_validation_weight_total(deck_, evaluator_->weight_total(), val_data_->rows(), comm);
  if (model_->classifies()) {
    const int classes = static_cast<int>(deck_.get_int("num_classes"));
    const long long bad = evaluator_->first_bad_label(classes);
    if (bad >= 0)
      comm.agree(val_data_->describe_row(static_cast<std::uint64_t>(bad), 1) +
                     strf(" is not a class index in [0, %d) (num_classes); cross_entropy needs integer labels",
                          classes),
                 ExitCode::bad_input);
  }
  const std::string path = config_.resume == "none" ? std::string() : choose_checkpoint(deck, comm);
  if (!path.empty()) restore(path);
}

namespace {

bool same_fields(const std::vector<FieldSpec>& a, const std::vector<FieldSpec>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].dtype != b[i].dtype || a[i].row_shape != b[i].row_shape ||
        a[i].ragged != b[i].ragged)
      return false;
  return true;
}

std::string list_fields(const std::vector<FieldSpec>& fields) {
  std::string s;
  for (const FieldSpec& f : fields) s += (s.empty() ? "" : ", ") + f.describe();
  return s;
}

}  // namespace

std::string NetworkTrainer::key_needing_validation() const {
  return config_.best_output.empty() ? rules_.key_needing_validation() : "best_output";
}

void NetworkTrainer::no_validation_split(const std::string& key) const {
  const char* what = key == "best_output"   ? "needs a validation split to choose the epoch by"
                     : key == "lr_schedule" ? "plateau needs a validation split to watch the validation loss"
                                            : "needs a validation split to watch the validation loss";
  deck_.fail(key, std::string(what) +
                      ": set validation_file, or validation_fraction > 0 (this run holds out no validation rows)");
}

void NetworkTrainer::remember_table(const std::optional<TableEncoding>& e) {
  if (!e) return;
  table_ = e->to_json();                    // for the weights file
  class_names_ = e->classes;                // class_weights' log line
  embedding_rows_ = e->embedding_rows();    // embedded columns: the model looks them up (build_model)
  unscaled_inputs_ = e->unscaled_inputs();  // one-hot entries and codes stay unscaled
  table_inputs_ = true;
}

void NetworkTrainer::open_data() {
  std::shared_ptr<const Dataset> data;
  comm_.run_agreed([&] {
    // Known from the deck alone: fail before reading any data.
    const std::string key = key_needing_validation();
    if (!key.empty() && config_.validation_file.empty() && config_.validation_fraction <= 0)
      no_validation_split(key);
    check_weighable();
    data = open_data_source(deck_, config_.data_file, "data_file");
    if (!config_.validation_file.empty())
      val_data_ = open_data_source(deck_, config_.validation_file, "validation_file");
  });
  const auto text = std::dynamic_pointer_cast<const TextTableDataset>(data);
  const auto val_text = std::dynamic_pointer_cast<const TextTableDataset>(val_data_);
  remember_table(encode_table_data(deck_, data, val_data_, comm_));  // text columns (Note [table inputs])
  table_inputs_ = table_inputs_ || (text && text->layout().opt.format == io::TextFormat::libsvm);  // missing: NaN
  if (!row_weight_key(deck_).empty()) {  // Note [network row weights]: both parts weighted, 1 where unset
    weigh_file_rows(data, text, "data_file");
    if (val_data_) weigh_file_rows(val_data_, val_text, "validation_file");
  }
  comm_.run_agreed([&] {
    if (!config_.validation_file.empty()) {
      train_data_ = data;
      const auto a = train_data_->fields(), b = val_data_->fields();
      if (!same_fields(a, b)) {
        if (a.size() == 2 && b.size() == 2)  // the tabular pair: widths in the words users know
          deck_.fail("validation_file", strf("%s has %llu inputs and %llu targets per row, %s has %llu and %llu",
                                             config_.validation_file.c_str(), (unsigned long long)b[0].width(),
                                             (unsigned long long)b[1].width(), config_.data_file.c_str(),
                                             (unsigned long long)a[0].width(), (unsigned long long)a[1].width()));
        deck_.fail("validation_file", config_.validation_file + " has fields " + list_fields(b) + ", " +
                                          config_.data_file + " has " + list_fields(a));
      }
    } else {
      // The held-out part is the tail of the file: datagen writes shuffled rows; for sorted data,
      // give a validation_file instead.
      const std::uint64_t rows = data->rows();
      const std::uint64_t n_val = validation_split_rows(rows, config_.validation_fraction);
      train_data_ = row_range(data, 0, rows - n_val);
      val_data_ = row_range(data, rows - n_val, n_val);
    }
    if (train_data_->rows() == 0) deck_.fail("validation_fraction", "leaves no training rows");
    if (!key_needing_validation().empty() && val_data_->rows() == 0) no_validation_split(key_needing_validation());
  });
}

void NetworkTrainer::check_weighable() const {
  const std::string key = row_weight_key(deck_);
  if (key.empty()) return;
  const std::string& model = deck_.get_string("model");
  if (model != "mlp")  // a weights field the model never reads would train it unweighted silently
    deck_.fail(key, "row and class weights train model mlp; model " + model + " weighs every row alike");
}

void NetworkTrainer::weigh_file_rows(std::shared_ptr<const Dataset>& data,
                                     const std::shared_ptr<const TextTableDataset>& text, const char* file_key) {
  std::vector<float> file = network_weight_file(deck_, file_key, data->rows(), comm_);
  comm_.run_agreed([&] {
    const bool column = text && text->layout().opt.weight_column >= 0;
    if (!deck_.get_string("weight_column").empty() && !column)
      deck_.fail("weight_column", data->description() + " is not a CSV/TSV table: give its weights in weight_file");
    data = with_row_weights(data, column ? text : nullptr, std::move(file));
  });
}

void NetworkTrainer::weigh_classes() {
  if (!deck_.get_string("class_weights").empty())
    weigh_by_class(deck_, train_data_, val_data_, class_names_, comm_);
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

void NetworkTrainer::check_labels() {
  // Every epoch holds the same rows (in another order), so one check at the first epoch covers all.
  const std::uint64_t rows = sampler_->rows_per_epoch(comm_.rank());
  const int classes = static_cast<int>(deck_.get_int("num_classes"));
  const FieldSpec* t = nullptr;
  for (const FieldSpec& f : specs_)
    if (f.name == Batch::kTargets) t = &f;
  if (!t || t->dtype != DType::f32) return;  // integer labels: checked against their range as they load
  const long long bad = nn::first_bad_label(Tensor<float>(shard_->float_rows(Batch::kTargets, 0, rows)),
                                            static_cast<int>(rows), classes);
  long long row = 1ll << 62;
  if (bad >= 0) {
    auto ids = to_host(Kokkos::subview(shard_->ids(), Kokkos::make_pair(bad, bad + 1)));
    row = static_cast<long long>(ids(0));
  }
  const long long first = comm_.min(row);
  if (first != (1ll << 62))
    comm_.agree(train_data_->describe_row(static_cast<std::uint64_t>(first), 1) +
                    strf(" is not a class index in [0, %d) (num_classes); cross_entropy needs integer labels",
                         classes),
                ExitCode::bad_input);
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
    if (epoch == start_epoch_ && model_->classifies()) check_labels();
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
  RunGuard guard(comm, c.watchdog_timeout);
  trainer.set_heartbeat(&guard.heartbeat());
  const TrainSummary s = trainer.run();
  if (s.stop_signal != 0)
    return RunLoop::stopped(s.stop_signal, strf("at step %llu", (unsigned long long)s.steps), s.last_checkpoint);
  return 0;
}

}  // namespace hpct
