// Early stopping and lr_schedule plateau in network runs: the stop epoch and the rates follow the
// validation losses by the rules of Note [early stopping] and optim/plateau.hpp; the stop ends the run
// as a normal end (outputs, final checkpoint, metrics records); a stopped and resumed run ends bit for
// bit as an uninterrupted one; 2 ranks decide as 1; a run without validation rows is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>

#include "io/hdf5.hpp"
#include "optim/plateau.hpp"
#include "support/test_support.hpp"
#include "train/checkpoint.hpp"
#include "train/overfit_run.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::checkpoint_path;
using hpct::test::error_message;
using hpct::test::make_deck;
using hpct::test::metrics_field;
using hpct::test::SelfComm;

namespace {

constexpr std::uint64_t kEpochs = 12, kRows = test::kOverfitRows;

std::string batch(const Comm& comm) { return test::overfit_batch(comm); }

TrainSummary train(const Comm& comm, const std::string& data, const std::vector<std::string>& overrides,
                   std::function<void(std::uint64_t)> hook = {}, std::uint64_t* steps_per_epoch = nullptr) {
  return test::overfit_train(comm, data, kEpochs, overrides, std::move(hook), steps_per_epoch);
}

// Lightning's EarlyStopping (mode min, check_finite off) over a series: the 1-based epoch it stops
// after, or 0 when it never does.
std::uint64_t lightning_stop(const std::vector<double>& losses, std::uint64_t patience, double min_delta) {
  double best = INFINITY;
  std::uint64_t wait = 0;
  for (std::size_t e = 0; e < losses.size(); ++e) {
    if (losses[e] + min_delta < best) {
      best = losses[e];
      wait = 0;
    } else if (++wait >= patience) {
      return e + 1;
    }
  }
  return 0;
}

}  // namespace

TEST(EarlyStopping, StopsWhenTheValidationLossStopsImproving) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "es_data", kRows);
  const std::string dir = hpct::test::empty_scratch_dir(comm, "es_stop");
  std::uint64_t steps = 0;
  train(comm, data, {batch(comm), "metrics_file=" + dir + "/full.jsonl"}, {}, &steps);
  const std::vector<double> full = metrics_field(dir + "/full.jsonl", "epoch", "val_loss");
  ASSERT_EQ(full.size(), kEpochs);
  const std::uint64_t stop = lightning_stop(full, 2, 0.0);
  ASSERT_GT(stop, 2u);
  ASSERT_LT(stop, kEpochs) << "the validation loss never rose for 2 epochs";
  const std::string metrics = dir + "/es.jsonl", out = dir + "/out.h5";
  const TrainSummary s = train(comm, data,
                               {batch(comm), "early_stopping_patience=2", "metrics_file=" + metrics,
                                "output=" + out, "checkpoint_dir=" + dir + "/ckpt",
                                "best_output=" + dir + "/best.h5"});
  EXPECT_EQ(s.stop_signal, 0);
  EXPECT_EQ(s.early_stopped_after, stop);
  EXPECT_EQ(s.steps, stop * steps);
  const std::vector<double> val = metrics_field(metrics, "epoch", "val_loss");
  EXPECT_EQ(val, std::vector<double>(full.begin(), full.begin() + static_cast<long>(stop)));
  // The record of the stop, with the best epoch best_output holds.
  const auto min_at = static_cast<std::uint64_t>(std::min_element(val.begin(), val.end()) - val.begin());
  EXPECT_EQ(metrics_field(metrics, "early_stop", "epoch"), std::vector<double>{double(stop)});
  EXPECT_EQ(metrics_field(metrics, "early_stop", "best_epoch"), std::vector<double>{double(min_at + 1)});
  EXPECT_EQ(metrics_field(metrics, "summary", "steps").size(), 1u);
  // The final checkpoint is the stop epoch's, and `output` holds its weights.
  const std::string final_checkpoint = checkpoint_path(dir + "/ckpt", stop * steps);
  EXPECT_EQ(checkpoint_candidates(dir + "/ckpt").front(), final_checkpoint);
  const std::vector<float> last = h5::read_all<float>(h5::File::open_read(final_checkpoint), "params");
  NetworkTrainer loaded(make_deck(test::overfit_deck(data, kEpochs), {"init_weights=" + out}), comm);
  auto got = to_host(loaded.model().store().params());
  ASSERT_EQ(last.size(), got.extent(0));
  for (std::size_t i = 0; i < last.size(); ++i) ASSERT_EQ(last[i], got(i)) << "parameter " << i;
  // min_delta: an improvement must beat the best by more than it; a huge one lets only the first
  // epoch (from +inf) improve.
  train(comm, data,
        {batch(comm), "early_stopping_patience=2", "early_stopping_min_delta=1e6",
         "metrics_file=" + dir + "/delta.jsonl"});
  EXPECT_EQ(metrics_field(dir + "/delta.jsonl", "epoch", "val_loss").size(), 3u);
}

TEST(Plateau, TheRateDropsWithTheValidationLoss) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "es_data", kRows);
  const std::string dir = hpct::test::empty_scratch_dir(comm, "plateau_rates");
  const std::string metrics = dir + "/m.jsonl";
  std::uint64_t steps = 0;
  train(comm, data,
        {batch(comm), "lr_schedule=plateau", "plateau_patience=0", "plateau_factor=0.5", "plateau_threshold=0.01",
         "warmup_steps=3", "log_every=1", "metrics_file=" + metrics},
        {}, &steps);
  const std::vector<double> val = metrics_field(metrics, "epoch", "val_loss");
  const std::vector<double> lr = metrics_field(metrics, "step", "lr");
  ASSERT_EQ(val.size(), kEpochs);
  ASSERT_EQ(lr.size(), kEpochs * steps);
  // Replays the schedule on the recorded losses (rel threshold 1%: 9 digits decide as the run did).
  optim::PlateauConfig c;
  c.factor = 0.5;
  c.patience = 0;
  c.threshold = 0.01;
  optim::Plateau p(c, 0.1);
  int drops = 0;
  for (std::uint64_t e = 0; e < kEpochs; ++e) {
    for (std::uint64_t k = 0; k < steps; ++k) {
      const std::uint64_t g = e * steps + k;
      const double want = g < 3 ? p.lr() * double(g + 1) / 3.0 : p.lr();
      ASSERT_NEAR(lr[g], want, 1e-8 * want) << "step " << g + 1;
    }
    drops += p.step(val[e]) ? 1 : 0;
  }
  EXPECT_GE(drops, 2);
  EXPECT_EQ(metrics_field(metrics, "plateau", "lr").size(), static_cast<std::size_t>(drops));
  EXPECT_EQ(metrics_field(metrics, "plateau", "lr").back(), p.lr());
}

// Both rules on: a stop signal before the first drop and one in the epoch before the stop (the
// counters are then partway); the resumed runs end with the same files bit for bit.
TEST(EarlyStopping, AResumedRunStopsAtTheSameEpochBitwise) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "es_data", kRows);
  const std::string dir = hpct::test::empty_scratch_dir(comm, "es_resume");
  const std::vector<std::string> rules = {batch(comm), "early_stopping_patience=3", "lr_schedule=plateau",
                                          "plateau_patience=0", "plateau_factor=0.5"};
  auto with = [&](std::vector<std::string> keys) {
    keys.insert(keys.begin(), rules.begin(), rules.end());
    return keys;
  };
  std::uint64_t steps = 0;
  const TrainSummary full = train(comm, data,
                                  with({"output=" + dir + "/full.h5", "metrics_file=" + dir + "/full.jsonl"}), {},
                                  &steps);
  ASSERT_LT(full.steps, kEpochs * steps) << "early stopping never triggered";
  ASSERT_FALSE(metrics_field(dir + "/full.jsonl", "plateau", "lr").empty()) << "the rate never dropped";
  const std::uint64_t stop_epoch = full.steps / steps;
  for (const std::uint64_t stop_at : {steps + 1, (stop_epoch - 1) * steps + 1}) {
    const std::string run = dir + "/stop" + std::to_string(stop_at);
    const std::vector<std::string> keys = with({"output=" + run + "/out.h5", "checkpoint_dir=" + run});
    const TrainSummary stopped = test::overfit_train_stopped(comm, data, kEpochs, keys, run, stop_at);
    ASSERT_EQ(stopped.stop_signal, SIGUSR1);
    std::vector<std::string> resume = keys;
    resume.push_back("resume=auto");
    const TrainSummary resumed = train(comm, data, resume);
    EXPECT_EQ(resumed.stop_signal, 0);
    EXPECT_EQ(stopped.steps + resumed.steps, full.steps) << "stopped after step " << stop_at;
    EXPECT_EQ(resumed.early_stopped_after, full.early_stopped_after);
    EXPECT_EQ(test::weight_tensors(run + "/out.h5"), test::weight_tensors(dir + "/full.h5"))
        << "stopped after step " << stop_at;
    // Resumed from the stop epoch's checkpoint with more epochs: the stop stands (Note [early stopping]).
    resume.push_back("epochs=30");
    const TrainSummary again = train(comm, data, resume);
    EXPECT_EQ(again.steps, 0u);
    EXPECT_EQ(test::weight_tensors(run + "/out.h5"), test::weight_tensors(dir + "/full.h5"));
  }
}

TEST(EarlyStopping, MultiRank_TwoRanksStopAsOneRank) {
  const Comm world;
  const std::string data = hpct::test::friedman_file(world, "es_data", kRows);
  const std::string dir = hpct::test::empty_scratch_dir(world, "es_ranks");
  const std::vector<std::string> rules = {"rank_invariant=true", "early_stopping_patience=3", "lr_schedule=plateau",
                                          "plateau_patience=0"};
  const std::string one_file = dir + "/one" + std::to_string(world.rank()) + ".h5";
  TrainSummary one_run;
  {
    SelfComm self;
    const Comm one(self.raw);
    std::vector<std::string> keys = rules;
    keys.insert(keys.end(), {"batch_size=16", "output=" + one_file});
    one_run = train(one, data, keys);
  }
  std::vector<std::string> keys = rules;
  keys.insert(keys.end(), {batch(world), "output=" + dir + "/world.h5"});
  const TrainSummary world_run = train(world, data, keys);
  EXPECT_EQ(world_run.steps, one_run.steps);  // every rank returned after the same epoch
  EXPECT_GT(world_run.early_stopped_after, 0u);
  EXPECT_EQ(world_run.early_stopped_after, one_run.early_stopped_after);
  EXPECT_EQ(world.min(static_cast<double>(world_run.steps)), world.max(static_cast<double>(world_run.steps)));
  EXPECT_EQ(test::weight_tensors(dir + "/world.h5"), test::weight_tensors(one_file));
}

TEST(EarlyStopping, NeedsAValidationSplit) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "es_data", kRows);
  for (const std::string& key : {std::string("early_stopping_patience=2"), std::string("lr_schedule=plateau")}) {
    ExitCode code = ExitCode::failure;
    std::string msg;
    try {
      train(comm, data, {batch(comm), "validation_fraction=0", key});
    } catch (const Error& e) {
      msg = e.what();
      code = e.code();
    }
    EXPECT_EQ(msg.rfind("--set:3: " + key.substr(0, key.find('=')) + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find("needs a validation split"), std::string::npos) << msg;
    EXPECT_EQ(code, ExitCode::bad_input);
  }
}
