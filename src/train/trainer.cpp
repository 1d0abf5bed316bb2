#include "train/trainer.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/log.hpp"
#include "hpctrain/version.hpp"
#include "nn/weights_io.hpp"
#include "train/data_stats.hpp"
#include "train/driver.hpp"
#include "train/metrics_sink.hpp"

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

std::string hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = static_cast<long>(seconds + 0.5);
  return strf("%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

template <class V>
auto row_block(const V& v, std::uint64_t first, std::uint64_t count) {
  return Kokkos::subview(v, Kokkos::make_pair(first, first + count), Kokkos::ALL());
}

}  // namespace

NetworkTrainer::NetworkTrainer(const deck::Deck& deck, const Comm& comm) : deck_(deck), comm_(comm) {
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

  // One extra gradient slot carries the local loss sum through the same all-reduce.
  comm.run_agreed([&] {
    model_ = make_model(deck, static_cast<int>(train_.d_in), static_cast<int>(train_.d_out),
                        static_cast<int>(batch), 1);
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

  shard_ = std::make_unique<EpochShard>(train_, *sampler_, comm.rank());

  // Validation: each rank evaluates a contiguous block of rows; the order does not matter.
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(ranks);
  val_first_ = val_.rows * r / p;
  val_count_ = val_.rows * (r + 1) / p - val_first_;
  val_x_ = View2<float>("val_inputs", std::max<std::uint64_t>(val_count_, 1), val_.d_in);
  val_y_ = View2<float>("val_targets", std::max<std::uint64_t>(val_count_, 1), val_.d_out);
  val_ids_ = View1<std::uint64_t>("val_ids", std::max<std::uint64_t>(val_count_, 1));
  {
    const auto ids = val_ids_;  // no `this` inside device lambdas
    const std::uint64_t first = val_first_;
    Kokkos::parallel_for("val_ids", Kokkos::RangePolicy<ExecSpace>(0, val_count_),
                         KOKKOS_LAMBDA(const std::uint64_t i) { ids(i) = first + i; });
  }
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
}

double NetworkTrainer::train_step(std::uint64_t epoch, std::uint64_t step, std::uint64_t global_step) {
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
    Kokkos::deep_copy(Kokkos::subview(store.grads(), store.count()), static_cast<float>(loss_sum));
    fence();
  }
  {
    ScopedTime t(time_.comm);
    comm_.allreduce_sum(store.grads());
  }
  ScopedTime t(time_.compute);
  float global_loss_sum = 0;
  Kokkos::deep_copy(global_loss_sum, Kokkos::subview(store.grads(), store.count()));
  const double loss = static_cast<double>(global_loss_sum) / n_step;
  if (clip_ > 0) optim::clip_grad_norm<float>(store.grad_span(), clip_);
  optimizer_->step(store.param_span(), store.grad_span(), schedule_.at(global_step));
  fence();
  return loss;
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
  const std::uint64_t steps = sampler_->steps_per_epoch();
  const std::uint64_t total_steps = steps * epochs;
  MetricsSink* metrics = nullptr;
  std::unique_ptr<MetricsSink> sink;
  comm_.run_agreed([&] { sink = std::make_unique<MetricsSink>(deck_.get_string("metrics_file"), comm_.rank()); });
  metrics = sink.get();

  TrainSummary s;
  Stopwatch run_clock;
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
    Stopwatch epoch_clock;
    long long bad = kNoBadValue;
    {
      ScopedTime t(time_.io);
      comm_.run_agreed([&] { bad = shard_->load(epoch); });
      bad = comm_.min(bad);
    }
    if (bad != kNoBadValue) comm_.agree(describe_bad_value(train_, bad), ExitCode::bad_input);

    double loss_sum = 0;
    Stopwatch window;
    std::uint64_t window_samples = 0;
    for (std::uint64_t step = 0; step < steps; ++step) {
      const std::uint64_t global_step = epoch * steps + step;
      const double loss = train_step(epoch, step, global_step);
      if (!std::isfinite(loss))
        comm_.agree(strf("loss is %s at epoch %llu step %llu: lower lr, or set clip_grad_norm", 
                         std::isnan(loss) ? "NaN" : "Inf", (unsigned long long)epoch + 1,
                         (unsigned long long)step + 1), ExitCode::failure);
      loss_sum += loss;
      window_samples += sampler_->step_samples(step);
      s.samples += sampler_->step_samples(step);
      ++s.steps;
      if ((global_step + 1) % log_every == 0 || global_step + 1 == total_steps) {
        const double rate = static_cast<double>(window_samples) / window.seconds();
        const double eta = run_clock.seconds() / static_cast<double>(s.steps) *
                           static_cast<double>(total_steps - s.steps);
        const double lr = schedule_.at(global_step);
        Log::info(strf("step %llu/%llu  epoch %llu/%llu  loss %.6f  lr %.3e  %.0f samples/s  ETA %s",
                       (unsigned long long)global_step + 1, (unsigned long long)total_steps,
                       (unsigned long long)epoch + 1, (unsigned long long)epochs, loss, lr, rate,
                       hms(eta).c_str()));
        if (metrics)
          metrics->write("step", {{"step", double(global_step + 1)}, {"epoch", double(epoch + 1)},
                                  {"loss", loss}, {"lr", lr}, {"samples_per_s", rate}});
        window.reset();
        window_samples = 0;
      }
    }
    s.last_epoch_loss = loss_sum / static_cast<double>(steps);
    {
      ScopedTime t(time_.compute);
      s.val_loss = validation_loss();
    }
    const double secs = epoch_clock.seconds();
    const double rate = static_cast<double>(sampler_->size()) / secs;
    Log::info(strf("Epoch %llu/%llu: avg loss = %.6f (%llu batches)  val loss = %.6f  %.0f samples/s  %.2f s",
                   (unsigned long long)epoch + 1, (unsigned long long)epochs, s.last_epoch_loss,
                   (unsigned long long)steps, s.val_loss, rate, secs));
    if (metrics)
      metrics->write("epoch", {{"epoch", double(epoch + 1)}, {"train_loss", s.last_epoch_loss},
                               {"val_loss", s.val_loss}, {"samples_per_s", rate}, {"seconds", secs}});
  }
  s.seconds = run_clock.seconds();
  s.time = time_;
  {
    ScopedTime t(s.time.io);
    write_outputs(s);
  }
  const double other = std::max(0.0, s.seconds - s.time.total());
  auto pct = [&](double x) { return 100.0 * x / std::max(s.seconds, 1e-12); };
  Log::info(strf("Done: %llu steps, %llu samples in %.2f s = %.0f samples/s; final val loss %.6f",
                 (unsigned long long)s.steps, (unsigned long long)s.samples, s.seconds,
                 static_cast<double>(s.samples) / s.seconds, s.val_loss));
  Log::info(strf("  time (rank 0): compute %.2f s (%.0f%%), comm %.2f s (%.0f%%), io %.2f s (%.0f%%), other %.2f s",
                 s.time.compute, pct(s.time.compute), s.time.comm, pct(s.time.comm), s.time.io,
                 pct(s.time.io), other));
  if (metrics)
    metrics->write("summary", {{"steps", double(s.steps)}, {"samples", double(s.samples)},
                               {"seconds", s.seconds}, {"samples_per_s", double(s.samples) / s.seconds},
                               {"val_loss", s.val_loss}, {"compute_s", s.time.compute},
                               {"comm_s", s.time.comm}, {"io_s", s.time.io}});
  return s;
}

void NetworkTrainer::write_outputs(const TrainSummary& s) {
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
  trainer.run();
  return 0;
}

}  // namespace hpct
