// The in-situ model: creation, pushes, sessions over every rank's buffer, checkpoints (see session.hpp).
#include "insitu/session.hpp"

#include <cmath>
#include <limits>

#include "core/log.hpp"
#include "core/timer.hpp"
#include "data/epoch_order.hpp"
#include "hpctrain/version.hpp"
#include "insitu/buffer_shard.hpp"
#include "insitu/device_arrays.hpp"
#include "insitu/layout.hpp"
#include "insitu/session_rows.hpp"
#include "insitu/staged_block.hpp"
#include "insitu/status.hpp"
#include "models/registry.hpp"
#include "nn/parameter_generation.hpp"
#include "nn/weights_io.hpp"
#include "train/data_stats.hpp"

namespace hpct::insitu {

namespace {

std::unique_ptr<Comm> duplicate(MPI_Comm comm, MPI_Comm& dup) {
  // Our own communicator: the library's collectives can never match a message of the host's.
  if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS)
    throw InsituError(Status::mpi, "MPI_Comm_dup failed on the communicator passed in");
  return std::make_unique<Comm>(dup);
}

[[noreturn]] void reject_nonfinite(std::uint64_t bad, std::uint64_t n, std::uint64_t d_in) {
  throw InsituError(Status::nonfinite,
                    bad < n * d_in
                        ? strf("push: inputs value %llu is NaN/Inf; nothing was stored", (unsigned long long)bad)
                        : strf("push: targets value %llu is NaN/Inf; nothing was stored",
                               (unsigned long long)(bad - n * d_in)));
}

EpochOrder session_sampler(const InsituConfig& c, std::uint64_t rows, int ranks) {
  return EpochOrder(rows, c.train.batch_size, ranks, c.train.accumulation_steps, c.train.seed, c.train.shuffle);
}

}  // namespace

// Note [init_weights in situ]
// init_weights starts the in-situ model as it starts train's run (trainer.cpp's build_model): the
// model first takes the state its parameters mean something with from the file
// (Model::fitted_state_from; the mlp: the standardisation statistics it trained with, and Note
// [fine-tuning across standardisation]'s note where the file trained with other standardisation
// than the deck's), then the parameters. Those statistics are the session's normalisation from the
// start, as set (stats_set_), so `stats_update frozen` keeps them where the first session would
// otherwise have replaced them with the pushed samples' and the fine-tuning would start its first
// layer on other numbers than it learnt; checkpoints, roll-back and hpctrain_get_stats see them.
// `stats_update every_session` asks for the pushed samples' statistics at every session, the
// first included. A file without them (written before standardisation) gives none: the first
// session's, as train takes its data's.
InsituModel::InsituModel(const std::string& name, const deck::Deck& deck, MPI_Comm comm)
    : name_(name),
      deck_(deck),
      cfg_(InsituConfig::from_deck(deck)),
      comm_(duplicate(comm, dup_)),
      log_(comm_->rank()),
      buffer_(cfg_.buffer_capacity, cfg_.input_width, cfg_.target_width),
      online_(cfg_.input_width, cfg_.target_width) {
  stats_ = online_.stats();  // identity until the first session
  // Embedding: the all-reduce watchdog would abort the host's job; off unless the deck asks for it.
  if (!deck_.is_set("watchdog_timeout")) cfg_.train.watchdog_timeout = 0;
  run_agreed_as(*comm_, Status::deck, [&] {
    const ModelBuildContext ctx{deck_, cfg_.input_width, cfg_.target_width, static_cast<int>(cfg_.train.batch_size),
                                cfg_.train.precision};
    model_ = make_model(ctx);
    if (cfg_.train.init_weights.empty()) {
      model_->store().initialize(cfg_.train.seed);
    } else {  // Note [init_weights in situ]
      model_->fitted_state_from(cfg_.train.init_weights);
      nn::read_weights(cfg_.train.init_weights, model_->store());
      DataStats taken;
      if (model_->fitted_data_stats(taken)) stats_ = taken, stats_set_ = true;
    }
  });
  // The learning-rate horizon: planned_sessions sessions over full buffers.
  const EpochOrder full = session_sampler(cfg_, cfg_.buffer_capacity * static_cast<std::uint64_t>(comm_->size()),
                                          comm_->size());
  steps_ = std::make_unique<StepRunner>(cfg_.train, *comm_, *model_,
                                        full.steps_per_epoch() * cfg_.session_epochs * cfg_.planned_sessions);
  // A session is a pass of the loop: checkpoints every checkpoint_every_sessions passes (0: only
  // when the caller saves).
  loop_ = std::make_unique<RunLoop>(*comm_,
                                    Cadence(cfg_.train.checkpoint_dir, 0, cfg_.checkpoint_every_sessions, 0));
  loop_->set_polls_stop_signal(false);
  loop_->set_log([this](const std::string& line) { log_.line(line); });
  epochs_ = std::make_unique<EpochSteps>(*comm_, cfg_.train, *steps_, *model_, *loop_, time_);
}

InsituModel::~InsituModel() {
  epochs_.reset();
  loop_.reset();
  steps_.reset();
  model_.reset();
  comm_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && dup_ != MPI_COMM_NULL) MPI_Comm_free(&dup_);
}

std::uint64_t InsituModel::global_batch() const {
  return cfg_.train.batch_size * static_cast<std::uint64_t>(comm_->size()) *
         static_cast<std::uint64_t>(cfg_.train.accumulation_steps);
}

template <class T>
void InsituModel::push(const T* x, const T* y, std::uint64_t n, Order order) {
  if (is_device_memory(x) || is_device_memory(y)) return push_from_device(x, y, n, order);
  const long long bad = buffer_.push(x, y, n, order);
  if (bad >= 0) reject_nonfinite(static_cast<std::uint64_t>(bad), n, static_cast<std::uint64_t>(cfg_.input_width));
  // The statistics see every pushed sample, in float32 as the buffer stores them.
  const std::vector<float> xs = to_rows(x, n, static_cast<std::uint64_t>(cfg_.input_width), order);
  const std::vector<float> ys = to_rows(y, n, static_cast<std::uint64_t>(cfg_.target_width), order);
  for (std::uint64_t i = 0; i < n; ++i)
    online_.add(&xs[i * static_cast<std::uint64_t>(cfg_.input_width)],
                &ys[i * static_cast<std::uint64_t>(cfg_.target_width)]);
  ++pushes_since_session_;
}

template <class T>
void InsituModel::push_from_device(const T* x, const T* y, std::uint64_t n, Order order) {
  const auto dx = static_cast<std::uint64_t>(cfg_.input_width), dy = static_cast<std::uint64_t>(cfg_.target_width);
  // The host path's check and message: the first NaN/Inf in the caller's layout, nothing stored.
  auto first_bad = [](const T* a, std::uint64_t count) -> long long {
    if (is_device_memory(a)) return first_nonfinite_on_device(a, count);
    for (std::uint64_t i = 0; i < count; ++i)
      if (!std::isfinite(a[i])) return static_cast<long long>(i);
    return -1;
  };
  long long bad = first_bad(x, n * dx);
  if (bad < 0) {
    bad = first_bad(y, n * dy);
    if (bad >= 0) bad += static_cast<long long>(n * dx);
  }
  if (bad >= 0) reject_nonfinite(static_cast<std::uint64_t>(bad), n, dx);
  // Converted and transposed on the device, then one copy into the host buffer (device_arrays.hpp).
  const auto hx = to_host(rows_in(x, n, dx, order));
  const auto hy = to_host(rows_in(y, n, dy, order));
  push(hx.data(), hy.data(), n, Order::row_major);
}

template void InsituModel::push<float>(const float*, const float*, std::uint64_t, Order);
template void InsituModel::push<double>(const double*, const double*, std::uint64_t, Order);

bool InsituModel::session_due() const {
  if (cfg_.session_trigger == "when_full") return comm_->min(buffer_.size() == buffer_.capacity() ? 1 : 0) == 1;
  if (cfg_.session_trigger == "every_pushes") return comm_->max(pushes_since_session_) >= cfg_.session_every_pushes;
  return false;
}

void InsituModel::update_stats(const Numbering& numbering) {
  if (!model_->needs_data_stats() || (stats_set_ && !cfg_.stats_every_session)) return;
  if (cfg_.stats_from_buffer) {
    const StagedBlock block(buffer_, numbering, *comm_);
    last_session_staged_rows_ = std::max(last_session_staged_rows_, block.staged());
    stats_ = compute_data_stats(block, *comm_);
  } else {
    stats_ = online_.merged(*comm_).stats();
  }
  model_->set_data_stats(stats_);
  stats_set_ = true;
}

double InsituModel::train_session(const std::string& time) {
  const std::uint64_t session = counters_.sessions + 1;
  const Stopwatch clock;
  const double step_seconds_before = time_.compute + time_.comm;
  last_session_staged_rows_ = 0;
  const Numbering numbering = Numbering::of(buffer_, *comm_);
  if (numbering.rows == 0)
    throw InsituError(Status::empty, strf("training session %llu: the buffer is empty on every rank (push samples "
                                          "before training)",
                                          (unsigned long long)session));
  log_.line(strf("Training session %llu at %s: %llu samples in buffer", (unsigned long long)session, time.c_str(),
                 (unsigned long long)numbering.rows));
  // The statistics before this session's too: a rolled-back model predicts exactly as before it.
  good_.stats = stats_, good_.stats_set = stats_set_;
  update_stats(numbering);
  keep_good_state();
  const EpochOrder sampler = session_sampler(cfg_, numbering.rows, comm_->size());
  BufferShard rows(buffer_, numbering, *comm_, sampler);
  const EpochHooks hooks = session_hooks(session);
  EpochTally tally;
  tally.global_step = counters_.global_step;
  TrainSummary summary;  // steps and samples of this session
  double loss = std::numeric_limits<double>::quiet_NaN();
  for (std::uint64_t e = 0; e < cfg_.session_epochs; ++e) {
    const std::uint64_t steps_before = summary.steps;
    tally.start_epoch();
    epochs_->stage(rows, counters_.epochs);
    epochs_->run(rows, sampler, counters_.epochs, 0, tally, summary, hooks);  // never stops: no signals polled
    counters_.global_step = tally.global_step;
    loss = tally.mean_loss();
    ++counters_.epochs;
    log_.line(strf("    Epoch %llu/%llu: avg loss = %.6f (%llu batches)", (unsigned long long)e + 1,
                   (unsigned long long)cfg_.session_epochs, loss,
                   (unsigned long long)(summary.steps - steps_before)));
  }
  last_session_staged_rows_ = std::max(last_session_staged_rows_, rows.staged_rows());
  counters_.sessions = session;
  pushes_since_session_ = 0;
  last_session_step_seconds_ = time_.compute + time_.comm - step_seconds_before;
  last_session_seconds_ = clock.seconds();
  log_.line(strf("  Training session %llu complete: final loss = %.6f", (unsigned long long)session, loss));
  if (loop_->checkpoint_due_after_pass(session - 1, counters_.global_step, false))
    write_checkpoint_to(cfg_.train.checkpoint_dir, true);
  return loss;
}

EpochHooks InsituModel::session_hooks(std::uint64_t session) {
  EpochHooks h;
  // Only a stop or a step cadence asks for one mid-epoch, and a session has neither; here for
  // completeness.
  h.checkpoint = [this](std::uint64_t, std::uint64_t) {
    return write_checkpoint_to(cfg_.train.checkpoint_dir, true);
  };
  h.nonfinite_stop = [this, session](const std::string& what, std::uint64_t, std::uint64_t) {
    roll_back();
    const std::string message = strf("training session %llu: ", (unsigned long long)session) + what +
                                "; the model is rolled back to its state before the session (lower lr or set "
                                "clip_grad_norm)";
    log_.line("  " + message);
    throw InsituError(Status::nonfinite, message);
  };
  h.log = [this](const std::string& line) { log_.line("    " + line); };
  return h;
}

void InsituModel::keep_good_state() {
  const std::uint64_t n = model_->store().count();
  if (good_.params.extent(0) != n) {
    good_.params = View1<float>("insitu_good_params", n);
    good_.m = View1<float>("insitu_good_m", steps_->optimizer().first_moment().extent(0));
    good_.v = View1<float>("insitu_good_v", steps_->optimizer().second_moment().extent(0));
  }
  Kokkos::deep_copy(good_.params, model_->store().params());
  Kokkos::deep_copy(good_.m, steps_->optimizer().first_moment());
  Kokkos::deep_copy(good_.v, steps_->optimizer().second_moment());
  good_.optimizer_steps = steps_->optimizer().steps_taken();
  good_.counters = counters_;
}

void InsituModel::roll_back() {
  Kokkos::deep_copy(model_->store().params(), good_.params);
  nn::parameters_written();  // Note [parameter generation]
  Kokkos::deep_copy(steps_->optimizer().first_moment(), good_.m);
  Kokkos::deep_copy(steps_->optimizer().second_moment(), good_.v);
  steps_->optimizer().set_steps_taken(good_.optimizer_steps);
  counters_ = good_.counters;
  if (model_->needs_data_stats()) {
    stats_ = good_.stats, stats_set_ = good_.stats_set;
    model_->set_data_stats(stats_);
  }
}

PredictOptions InsituModel::predict_options(int members, std::uint64_t seed) const {
  PredictOptions o;
  o.chunk = kPredictChunk;
  const std::vector<NamedShape> outputs = model_->predict_outputs(o);
  if (outputs.empty()) throw InsituError(Status::unsupported, "the " + model_->family() + " model has no predict");
  o.outputs = {outputs.front().name};  // the primary output only
  o.sampling.method = cfg_.sample_method;
  o.sampling.steps = cfg_.sample_steps;
  o.sampling.clip = cfg_.sample_clip;
  o.sampling.members = members;
  o.sampling.seed = seed;
  return o;
}

PredictOutput InsituModel::predict(const View2<float>& x, std::uint64_t n, int members, std::uint64_t seed) {
  // The model's normalisation is the session's (update_stats, load): identity until it is set.
  const Batch b = prediction_batch(Tensor<float>(x.data(), Shape{static_cast<std::int64_t>(n), x.extent_int(1)}),
                                   static_cast<int>(n));
  // predict_weights ema: the EMA in the store for this prediction only; local, so not when sharded
  // (gathering the slices would be a collective).
  const bool ema = cfg_.predict_with_ema && steps_->ema() && !steps_->sharded();
  if (ema) steps_->use_ema_weights(true);
  PredictOutput out = model_->predict(b, predict_options(members, seed)).front();
  if (ema) steps_->use_ema_weights(false);
  return out;
}

int InsituModel::output_width() const {
  const std::vector<NamedShape> outputs = model_->predict_outputs(predict_options(1, 0));
  return static_cast<int>(outputs.front().row_shape.back());
}

}  // namespace hpct::insitu
