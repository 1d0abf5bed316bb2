#include "train/trainer.hpp"

#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>

#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "core/signals.hpp"
#include "hpctrain/version.hpp"
#include "nn/weights_io.hpp"
#include "train/data_stats.hpp"
#include "train/driver.hpp"
#include "train/metrics_sink.hpp"
#include "train/resume.hpp"

namespace hpct {

void declare_network_keys(deck::Schema& s) {
  declare_model_keys(s);
  s.add_string("init_weights", "", "HDF5 weights file (as written by `output`) to start from; empty: seed init");

  s.section("training");
  s.add_int("batch_size", 32, 1, 1 << 24, "samples per rank per micro-batch");
  s.add_int("accumulation_steps", 1, 1, 1 << 16,
            "micro-batches per optimizer step (gradients all-reduced once, after the last)");
  s.add_int("epochs", 10, 1, 1 << 30, "passes over the training data");
  s.add_bool("shuffle", true, "new global sample order every epoch, from (seed, epoch)");
  s.add_choice("loss", "mse", {"mse"}, "training loss");

  s.section("optimizer");
  s.add_choice("optimizer", "adamw", {"adamw", "sgd"}, "update rule (PyTorch semantics)");
  s.add_real("lr", 1e-3, 0.0, 100.0, "base learning rate");
  s.add_real("weight_decay", 0.0, 0.0, 10.0, "adamw: decoupled weight decay; sgd: L2 added to the gradient");
  s.add_real("momentum", 0.0, 0.0, 1.0, "sgd momentum (0: plain SGD)");
  s.add_real("beta1", 0.9, 0.0, 0.999999, "adamw first-moment decay");
  s.add_real("beta2", 0.999, 0.0, 0.99999999, "adamw second-moment decay");
  s.add_real("adam_eps", 1e-8, 0.0, 1.0, "adamw denominator epsilon");
  s.add_choice("lr_schedule", "constant", {"constant", "cosine"}, "learning-rate schedule after warmup");
  s.add_int("warmup_steps", 0, 0, 1ll << 40, "optimizer steps of linear warmup");
  s.add_real("min_lr_ratio", 0.0, 0.0, 1.0, "cosine: final rate as a fraction of lr");
  s.add_real("clip_grad_norm", 0.0, 0.0, 1e12, "clip gradients to this global L2 norm (0: off)");
  s.add_choice("nan_policy", "stop", {"stop", "skip"},
               "NaN/Inf loss or gradient: stop (checkpoint the last good state, exit 1) or skip the step");

  s.section("checkpoint");
  s.add_string("checkpoint_dir", "", "directory of checkpoints (empty: no checkpoints)");
  s.add_int("checkpoint_every_steps", 0, 0, 1ll << 40, "checkpoint every N optimizer steps (0: off)");
  s.add_int("checkpoint_every_epochs", 0, 0, 1ll << 30, "checkpoint every N epochs (0: off)");
  s.add_real("checkpoint_every_minutes", 0.0, 0.0, 1e9, "checkpoint every M minutes of wall time (0: off)");
  s.add_int("checkpoint_keep", 3, 1, 100000, "number of newest checkpoints kept");
  s.add_string("resume", "none", "none | auto (newest valid checkpoint in checkpoint_dir) | a checkpoint path");
  s.add_real("watchdog_timeout", 600.0, 0.0, 1e9,
             "seconds a rank may wait in the gradient all-reduce before the job is aborted, naming the "
             "ranks that never arrived (0: off)");
}

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

// ids(i) = first + i for i < n. A free function: nvcc allows no device lambda in a constructor.
void fill_consecutive(const View1<std::uint64_t>& ids, std::uint64_t first, std::uint64_t n) {
  Kokkos::parallel_for("val_ids", Kokkos::RangePolicy<ExecSpace>(0, n),
                       KOKKOS_LAMBDA(const std::uint64_t i) { ids(i) = first + i; });
}

std::string hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = static_cast<long>(seconds + 0.5);
  return strf("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

// Trailing gradient slots that travel with the all-reduce (summed over ranks).
enum ExtraSlot { kLossSlot = 0, kStopSlot = 1, kTimeCheckpointSlot = 2, kExtraSlots = 3 };

template <class V>
auto row_block(const V& v, std::uint64_t first, std::uint64_t count) {
  return Kokkos::subview(v, Kokkos::make_pair(first, first + count), Kokkos::ALL());
}

}  // namespace

NetworkTrainer::NetworkTrainer(const deck::Deck& deck, const Comm& comm)
    : deck_(deck), comm_(comm), reducer_(comm, deck.get_real("watchdog_timeout")) {
  const int ranks = comm.size();
  const auto batch = static_cast<std::uint64_t>(deck.get_int("batch_size"));
  const int accumulation = static_cast<int>(deck.get_int("accumulation_steps"));
  const auto seed = static_cast<std::uint64_t>(deck.get_int("seed"));

  comm.run_agreed([&] {
    train_ = describe_tabular(deck.get_string("data_file"), deck.get_string("inputs_dataset"),
                              deck.get_string("targets_dataset"));
    const std::string& vfile = deck.get_string("validation_file");
    if (!vfile.empty()) {
      val_ = describe_tabular(vfile, deck.get_string("inputs_dataset"), deck.get_string("targets_dataset"));
      if (val_.d_in != train_.d_in || val_.d_out != train_.d_out)
        deck.fail("validation_file", strf("%s has %llu inputs and %llu targets per row, %s has %llu and %llu",
                                          vfile.c_str(), (unsigned long long)val_.d_in,
                                          (unsigned long long)val_.d_out, train_.file.c_str(),
                                          (unsigned long long)train_.d_in, (unsigned long long)train_.d_out));
    } else {
      // The held-out part is the tail of the file: datagen writes shuffled rows; for sorted data,
      // give a validation_file instead.
      val_ = train_;
      const auto n_val = static_cast<std::uint64_t>(
          std::floor(deck.get_real("validation_fraction") * static_cast<double>(train_.rows)));
      val_.first_row = train_.rows - n_val;
      val_.rows = n_val;
      train_.rows -= n_val;
    }
    if (train_.rows == 0) deck.fail("validation_fraction", "leaves no training rows");
  });

  sampler_ = std::make_unique<Sampler>(train_.rows, batch, ranks, accumulation, seed, deck.get_bool("shuffle"));

  // Extra gradient slots carry the loss sum and the stop/checkpoint flags through the same
  // all-reduce: the agreement on stopping costs no collective of its own.
  comm.run_agreed([&] {
    model_ = make_model(deck, static_cast<int>(train_.d_in), static_cast<int>(train_.d_out),
                        static_cast<int>(batch), kExtraSlots);
  });
  // Models that normalise their data get the training part's statistics (reduced over ranks).
  if (model_->needs_data_stats()) model_->set_data_stats(compute_data_stats(train_, comm));

  comm.run_agreed([&] {
    const std::string& init = deck.get_string("init_weights");
    if (init.empty()) model_->store().init_uniform(seed);
    else nn::read_weights(init, model_->store());
  });
  const std::uint64_t fp = parameter_fingerprint(model_->store().params());
  if (comm.min(fp) != comm.max(fp))
    comm.agree("initial parameters differ between ranks (fingerprint mismatch)", ExitCode::failure);
  else
    comm.agree("");

  optim::OptimizerConfig oc;
  oc.kind = deck.get_string("optimizer");
  oc.weight_decay = deck.get_real("weight_decay");
  oc.momentum = deck.get_real("momentum");
  oc.beta1 = deck.get_real("beta1");
  oc.beta2 = deck.get_real("beta2");
  oc.eps = deck.get_real("adam_eps");
  optimizer_ = std::make_unique<optim::Optimizer<float>>(oc, model_->store().count());
  schedule_.kind = deck.get_string("lr_schedule");
  schedule_.lr = deck.get_real("lr");
  schedule_.warmup_steps = static_cast<std::uint64_t>(deck.get_int("warmup_steps"));
  schedule_.total_steps = sampler_->steps_per_epoch() * static_cast<std::uint64_t>(deck.get_int("epochs"));
  schedule_.min_lr_ratio = deck.get_real("min_lr_ratio");
  clip_ = deck.get_real("clip_grad_norm");
  skip_nan_ = deck.get_string("nan_policy") == "skip";
  extra_host_ = HostView1<float>("extra_slots_host", kExtraSlots);  // once: the step must not allocate

  shard_ = std::make_unique<EpochShard>(train_, *sampler_, comm.rank());

  // Validation: each rank evaluates a contiguous block of rows; the order does not matter.
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(ranks);
  val_first_ = val_.rows * r / p;
  val_count_ = val_.rows * (r + 1) / p - val_first_;
  val_x_ = View2<float>("val_inputs", std::max<std::uint64_t>(val_count_, 1), val_.d_in);
  val_y_ = View2<float>("val_targets", std::max<std::uint64_t>(val_count_, 1), val_.d_out);
  val_ids_ = View1<std::uint64_t>("val_ids", std::max<std::uint64_t>(val_count_, 1));
  fill_consecutive(val_ids_, val_first_, val_count_);
  long long bad = kNoBadValue;
  comm.run_agreed([&] {
    auto hx = Kokkos::create_mirror_view(val_x_);
    auto hy = Kokkos::create_mirror_view(val_y_);
    bad = read_tabular_block(val_, val_first_, val_count_, hx.data(), hy.data());
    Kokkos::deep_copy(val_x_, hx);
    Kokkos::deep_copy(val_y_, hy);
  });
  bad = comm.min(bad);
  if (bad != kNoBadValue) comm.agree(describe_bad_value(val_, bad), ExitCode::bad_input);

  resumed_from_ = choose_checkpoint(deck, comm);
  if (!resumed_from_.empty()) {
    CheckpointState st;
    comm.run_agreed([&] {
      check_resume_deck(deck, inspect_checkpoint(resumed_from_));  // names the key that changed
      st = read_checkpoint(resumed_from_, model_->store(), *optimizer_);
    });
    // The position is a sample index in the epoch's global order: any rank count or batch size
    // whose global batch divides it continues the same order.
    const std::uint64_t g = sampler_->global_batch();
    if (st.epoch_samples >= sampler_->size()) {
      start_epoch_ = st.epoch + 1;
    } else {
      if (st.epoch_samples % g != 0)
        comm.agree(strf("%s: resume at sample %llu of epoch %llu needs a global batch that divides it; "
                        "batch_size x ranks x accumulation_steps = %llu does not",
                        resumed_from_.c_str(), (unsigned long long)st.epoch_samples,
                        (unsigned long long)st.epoch + 1, (unsigned long long)g),
                   ExitCode::bad_input);
      start_epoch_ = st.epoch;
      start_step_ = st.epoch_samples / g;
      start_epoch_loss_sum_ = st.epoch_loss_sum;
      start_epoch_loss_count_ = st.epoch_steps;
    }
    global_step_ = st.global_step;
    skipped_steps_ = st.skipped_steps;
    best_val_loss_ = st.best_val_loss;
    if (st.global_batch != g)
      Log::info(strf("resume: global batch changed from %llu to %llu: training continues the same sample "
                     "order with a different batch",
                     (unsigned long long)st.global_batch, (unsigned long long)g));
    Log::info(strf("resume: from %s (step %llu, epoch %llu, sample %llu of the epoch; written by %llu rank(s), "
                   "%s build)",
                   resumed_from_.c_str(), (unsigned long long)st.global_step, (unsigned long long)st.epoch + 1,
                   (unsigned long long)st.epoch_samples, (unsigned long long)st.ranks, st.backend.c_str()));
  }
}

NetworkTrainer::StepResult NetworkTrainer::train_step(std::uint64_t epoch, std::uint64_t step,
                                                      std::uint64_t global_step, bool time_checkpoint_due) {
  auto& store = model_->store();
  const double n_step = static_cast<double>(sampler_->step_samples(step));
  double loss_sum = 0;
  {
    ScopedTime t(time_.compute);
    store.zero_grads();
    for (int k = 0; k < sampler_->accumulation(); ++k) {
      const std::uint64_t first = shard_->first(step, k), n = shard_->count(step, k);
      if (n == 0) continue;  // this rank has no rows in the tail of the last step
      Batch b;
      b.x = row_block(shard_->inputs(), first, n);
      b.y = row_block(shard_->targets(), first, n);
      b.ids = Kokkos::subview(shard_->ids(), Kokkos::make_pair(first, first + n));
      b.epoch = epoch;
      b.n = static_cast<int>(n);
      loss_sum += model_->accumulate_gradients(b, n_step);
    }
    auto extra = Kokkos::subview(store.grads(), Kokkos::make_pair(store.count(), store.count() + kExtraSlots));
    extra_host_(kLossSlot) = static_cast<float>(loss_sum);
    extra_host_(kStopSlot) = stop_signal() != 0 ? 1.0f : 0.0f;
    extra_host_(kTimeCheckpointSlot) = time_checkpoint_due ? 1.0f : 0.0f;
    Kokkos::deep_copy(extra, extra_host_);
    fence();
  }
  {
    ScopedTime t(time_.comm);
    fence();
    reducer_.sum(store.grads().data(), store.grads().span(), global_step);
  }
  ScopedTime t(time_.compute);
  Kokkos::deep_copy(extra_host_,
                    Kokkos::subview(store.grads(), Kokkos::make_pair(store.count(), store.count() + kExtraSlots)));
  StepResult r;
  r.loss = static_cast<double>(extra_host_(kLossSlot)) / n_step;
  r.stop = extra_host_(kStopSlot) > 0;
  r.checkpoint_due = extra_host_(kTimeCheckpointSlot) > 0;
  // Gradients are identical on every rank after the all-reduce, so every rank reaches the same
  // verdict on NaN/Inf without communicating.
  const double norm = clip_ > 0 ? optim::clip_grad_norm<float>(store.grad_span(), clip_)
                                : optim::grad_norm<float>(store.grad_span());
  if (!std::isfinite(r.loss) || !std::isfinite(norm)) {
    const std::string what = strf("%s at step %llu (epoch %llu)", std::isfinite(r.loss) ? "gradient norm is NaN/Inf" :
                                  "loss is NaN/Inf", (unsigned long long)global_step + 1, (unsigned long long)epoch + 1);
    if (!skip_nan_) {
      // The parameters are still the last good ones: save them before stopping.
      std::string saved;
      if (!deck_.get_string("checkpoint_dir").empty())
        saved = "; last good state saved in " + checkpoint(epoch, step, nan_epoch_loss_sum_, nan_epoch_loss_count_);
      comm_.agree(what + saved + " (nan_policy stop; lower lr or set clip_grad_norm)", ExitCode::failure);
    }
    ++skipped_steps_;
    Log::info(what + strf(": step skipped (nan_policy skip; %llu skipped so far)", (unsigned long long)skipped_steps_));
    r.applied = false;
    return r;
  }
  optimizer_->step(store.param_span(), store.grad_span(), schedule_.at(global_step));
  fence();
  return r;
}

std::string NetworkTrainer::checkpoint(std::uint64_t epoch, std::uint64_t epoch_steps, double epoch_loss_sum,
                                       std::uint64_t epoch_loss_count) {
  CheckpointState st;
  st.global_step = global_step_;
  st.epoch = epoch;
  st.epoch_samples = std::min(sampler_->size(), epoch_steps * sampler_->global_batch());
  st.epoch_steps = epoch_loss_count;
  st.epoch_loss_sum = epoch_loss_sum;
  st.skipped_steps = skipped_steps_;
  st.best_val_loss = best_val_loss_;
  st.seed = static_cast<std::uint64_t>(deck_.get_int("seed"));
  st.ranks = static_cast<std::uint64_t>(comm_.size());
  st.global_batch = sampler_->global_batch();
  st.deck = deck_.resolved();
  st.model_family = model_->family();
  st.model_config = model_->config_string();
  st.version = kVersion;
  st.git_hash = kGitHash;
  st.backend = ExecSpace::name();
  std::string path, err;
  {
    ScopedTime t(time_.io);
    // Rank 0 writes (the state is replicated); the others wait for its verdict, so a failed write
    // stops every rank and the previous checkpoint stays intact.
    if (comm_.rank() == 0) {
      try {
        path = write_checkpoint(deck_.get_string("checkpoint_dir"), static_cast<int>(deck_.get_int("checkpoint_keep")),
                                st, model_->store(), *optimizer_);
      } catch (const std::exception& e) {
        err = std::string("checkpoint write failed: ") + e.what();
      }
    }
    comm_.broadcast(err, 0);
    comm_.agree(err, ExitCode::failure);
    comm_.broadcast(path, 0);
  }
  Log::info("  checkpoint " + path);
  return path;
}

double NetworkTrainer::validation_loss() {
  if (val_.rows == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto batch = static_cast<std::uint64_t>(deck_.get_int("batch_size"));
  double sum = 0;
  for (std::uint64_t first = 0; first < val_count_; first += batch) {
    const std::uint64_t n = std::min(batch, val_count_ - first);
    Batch b;
    b.x = row_block(val_x_, first, n);
    b.y = row_block(val_y_, first, n);
    b.ids = Kokkos::subview(val_ids_, Kokkos::make_pair(first, first + n));
    b.epoch = kValidationEpoch;
    b.n = static_cast<int>(n);
    sum += model_->loss_sum(b);
  }
  return comm_.sum(sum) / static_cast<double>(val_.rows);
}

TrainSummary NetworkTrainer::run() {
  const auto epochs = static_cast<std::uint64_t>(deck_.get_int("epochs"));
  const auto log_every = static_cast<std::uint64_t>(deck_.get_int("log_every"));
  const auto every_steps = static_cast<std::uint64_t>(deck_.get_int("checkpoint_every_steps"));
  const auto every_epochs = static_cast<std::uint64_t>(deck_.get_int("checkpoint_every_epochs"));
  const double every_seconds = 60.0 * deck_.get_real("checkpoint_every_minutes");
  const bool checkpoints = !deck_.get_string("checkpoint_dir").empty();
  const std::uint64_t steps = sampler_->steps_per_epoch();
  const std::uint64_t total_steps = steps * epochs;
  install_stop_handlers();
  std::unique_ptr<MetricsSink> metrics;
  comm_.run_agreed([&] {
    metrics = std::make_unique<MetricsSink>(deck_.get_string("metrics_file"), comm_.rank(), !resumed_from_.empty());
  });

  // The all-reduce watchdog names missing ranks after watchdog_timeout; this backstop covers every
  // other place a dead peer could block us (checkpoint agreement, validation, data loading).
  Heartbeat heartbeat(2.0 * deck_.get_real("watchdog_timeout"), comm_.rank());
  TrainSummary s;
  Stopwatch run_clock, checkpoint_clock;
  const std::uint64_t first_global_step = global_step_;
  for (std::uint64_t epoch = start_epoch_; epoch < epochs; ++epoch) {
    Stopwatch epoch_clock;
    heartbeat.beat("loading the epoch's data");
    long long bad = kNoBadValue;
    {
      ScopedTime t(time_.io);
      comm_.run_agreed([&] { bad = shard_->load(epoch); });
      bad = comm_.min(bad);
    }
    if (bad != kNoBadValue) comm_.agree(describe_bad_value(train_, bad), ExitCode::bad_input);

    const std::uint64_t first_step = epoch == start_epoch_ ? start_step_ : 0;
    double loss_sum = epoch == start_epoch_ ? start_epoch_loss_sum_ : 0.0;
    std::uint64_t loss_count = epoch == start_epoch_ ? start_epoch_loss_count_ : 0;
    std::uint64_t epoch_samples = 0;
    Stopwatch window;
    std::uint64_t window_samples = 0;
    for (std::uint64_t step = first_step; step < steps; ++step) {
      const bool time_due = checkpoints && every_seconds > 0 && comm_.rank() == 0 &&
                            checkpoint_clock.seconds() >= every_seconds;
      heartbeat.beat("a training step");
      nan_epoch_loss_sum_ = loss_sum;  // for the checkpoint nan_policy stop writes
      nan_epoch_loss_count_ = loss_count;
      const StepResult r = train_step(epoch, step, global_step_, time_due);
      ++global_step_;
      if (r.applied) loss_sum += r.loss, ++loss_count;
      window_samples += sampler_->step_samples(step);
      epoch_samples += sampler_->step_samples(step);
      s.samples += sampler_->step_samples(step);
      ++s.steps;
      if (step_hook_) step_hook_(global_step_);
      if (global_step_ % log_every == 0 || global_step_ == total_steps) {
        const double rate = static_cast<double>(window_samples) / window.seconds();
        const double eta = run_clock.seconds() / static_cast<double>(global_step_ - first_global_step) *
                           static_cast<double>(total_steps - global_step_);
        const double lr = schedule_.at(global_step_ - 1);
        Log::info(strf("step %llu/%llu  epoch %llu/%llu  loss %.6f  lr %.3e  %.0f samples/s  ETA %s",
                       (unsigned long long)global_step_, (unsigned long long)total_steps,
                       (unsigned long long)epoch + 1, (unsigned long long)epochs, r.loss, lr, rate,
                       hms(eta).c_str()));
        if (metrics)
          metrics->write("step", {{"step", double(global_step_)}, {"epoch", double(epoch + 1)},
                                  {"loss", r.loss}, {"lr", lr}, {"samples_per_s", rate}});
        window.reset();
        window_samples = 0;
      }
      const bool last_of_epoch = step + 1 == steps;
      if (r.stop) {
        int sig = stop_signal();
        s.stop_signal = sig != 0 ? sig : SIGUSR1;  // another rank got it
        if (checkpoints) s.last_checkpoint = checkpoint(epoch, step + 1, loss_sum, loss_count);
        s.seconds = run_clock.seconds();
        s.time = time_;
        s.skipped_steps = skipped_steps_;
        return s;
      }
      if (checkpoints && !last_of_epoch &&
          ((every_steps > 0 && global_step_ % every_steps == 0) || r.checkpoint_due)) {
        s.last_checkpoint = checkpoint(epoch, step + 1, loss_sum, loss_count);
        checkpoint_clock.reset();
      }
    }
    s.last_epoch_loss = loss_count > 0 ? loss_sum / static_cast<double>(loss_count)
                                       : std::numeric_limits<double>::quiet_NaN();
    heartbeat.beat("validation and the end of the epoch");
    {
      ScopedTime t(time_.compute);
      s.val_loss = validation_loss();
    }
    if (std::isfinite(s.val_loss) && !(s.val_loss >= best_val_loss_)) best_val_loss_ = s.val_loss;
    const double secs = epoch_clock.seconds();
    const double rate = static_cast<double>(epoch_samples) / secs;
    const std::string val = val_.rows > 0 ? strf("  val loss = %.6f", s.val_loss) : std::string();
    Log::info(strf("Epoch %llu/%llu: avg loss = %.6f (%llu batches)%s  %.0f samples/s  %.2f s",
                   (unsigned long long)epoch + 1, (unsigned long long)epochs, s.last_epoch_loss,
                   (unsigned long long)steps, val.c_str(), rate, secs));
    if (metrics)
      metrics->write("epoch", {{"epoch", double(epoch + 1)}, {"train_loss", s.last_epoch_loss},
                               {"val_loss", s.val_loss}, {"samples_per_s", rate}, {"seconds", secs}});
    const bool last_epoch = epoch + 1 == epochs;
    const bool step_due = every_steps > 0 && global_step_ % every_steps == 0;
    const bool epoch_due = every_epochs > 0 && (epoch + 1) % every_epochs == 0;
    const bool time_due = every_seconds > 0 && comm_.max(checkpoint_clock.seconds()) >= every_seconds;
    if (checkpoints && (last_epoch || step_due || epoch_due || time_due)) {
      s.last_checkpoint = checkpoint(epoch, steps, loss_sum, loss_count);
      checkpoint_clock.reset();
    }
  }
  s.seconds = run_clock.seconds();
  s.time = time_;
  s.skipped_steps = skipped_steps_;
  {
    ScopedTime t(s.time.io);
    write_outputs();
  }
  const double other = std::max(0.0, s.seconds - s.time.total());
  auto pct = [&](double x) { return 100.0 * x / std::max(s.seconds, 1e-12); };
  Log::info(strf("Done: %llu steps, %llu samples in %.2f s = %.0f samples/s; final val loss %.6f",
                 (unsigned long long)s.steps, (unsigned long long)s.samples, s.seconds,
                 static_cast<double>(s.samples) / s.seconds, s.val_loss));
  Log::info(strf("  time (rank 0): compute %.2f s (%.0f%%), comm %.2f s (%.0f%%), io %.2f s (%.0f%%), other %.2f s",
                 s.time.compute, pct(s.time.compute), s.time.comm, pct(s.time.comm), s.time.io,
                 pct(s.time.io), other));
  if (s.skipped_steps > 0)
    Log::info(strf("  %llu step(s) skipped for NaN/Inf (nan_policy skip)", (unsigned long long)s.skipped_steps));
  if (metrics)
    metrics->write("summary", {{"steps", double(s.steps)}, {"samples", double(s.samples)},
                               {"seconds", s.seconds}, {"samples_per_s", double(s.samples) / s.seconds},
                               {"val_loss", s.val_loss}, {"compute_s", s.time.compute},
                               {"comm_s", s.time.comm}, {"io_s", s.time.io},
                               {"skipped_steps", double(s.skipped_steps)}});
  return s;
}

void NetworkTrainer::write_outputs() {
  const std::string& out = deck_.get_string("output");
  if (out.empty()) return;
  std::string err;
  if (comm_.rank() == 0) {
    try {
      nn::Attributes attrs = {{"model", model_->family()},
                              {"config", model_->config_string()},
                              {"hpctrain_version", kVersion},
                              {"git_hash", kGitHash},
                              {"backend", ExecSpace::name()},
                              {"deck", deck_.resolved()}};
      nn::write_weights(out, model_->store(), attrs, model_->extra_datasets());
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  comm_.agree(err, ExitCode::failure);
  Log::info("  weights written to " + out);
}

int run_network_training(const deck::Deck& deck, const Comm& comm, const Topology& topo) {
  NetworkTrainer trainer(deck, comm);
  const Sampler& smp = trainer.sampler();
  Log::info(strf("  model %s: %s, %llu parameters", trainer.model().family().c_str(),
                 trainer.model().config_string().c_str(),
                 (unsigned long long)trainer.model().store().count()));
  Log::info(strf("  data %s: %llu training rows, %llu validation rows",
                 deck.get_string("data_file").c_str(), (unsigned long long)smp.size(),
                 (unsigned long long)trainer.validation_rows()));
  Log::info(strf("  effective global batch %llu = %lld per rank x %d ranks x %lld accumulation steps; "
                 "%llu steps per epoch (last step %llu samples)",
                 (unsigned long long)smp.global_batch(), deck.get_int("batch_size"), comm.size(),
                 deck.get_int("accumulation_steps"), (unsigned long long)smp.steps_per_epoch(),
                 (unsigned long long)smp.step_samples(smp.steps_per_epoch() - 1)));
  (void)topo;
  const TrainSummary s = trainer.run();
  if (s.stop_signal != 0) {
    Log::info(strf("Stopped by signal %d at step %llu%s; exit code %d asks the job script to requeue",
                   s.stop_signal, (unsigned long long)(s.steps), 
                   s.last_checkpoint.empty() ? " (no checkpoint_dir: nothing saved)"
                                             : (": checkpoint " + s.last_checkpoint).c_str(),
                   static_cast<int>(ExitCode::requeue)));
    return static_cast<int>(ExitCode::requeue);
  }
  return 0;
}

}  // namespace hpct
