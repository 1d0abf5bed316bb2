// best_output: the weights of the epoch with the lowest validation loss, bit for bit those of that
// epoch's checkpoint; the same file after a stop and resume, and on 2 ranks as on 1; the errors.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "io/hdf5.hpp"
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
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kEpochs = 10, kRows = test::kOverfitRows;

std::string batch(const Comm& comm) { return test::overfit_batch(comm); }

TrainSummary train(const Comm& comm, const std::string& data, const std::vector<std::string>& overrides,
                   std::function<void(std::uint64_t)> hook = {}, std::uint64_t* steps_per_epoch = nullptr) {
  return test::overfit_train(comm, data, kEpochs, overrides, std::move(hook), steps_per_epoch);
}

std::string attribute(const std::string& path, const std::string& key) {
  return h5::read_attr_string(h5::File::open_read(path), "/", key);
}

}  // namespace

TEST(BestOutput, HoldsTheEpochOfTheLowestValidationLossBitwise) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "best_data", kRows);
  const std::string dir = hpct::test::empty_scratch_dir(comm, "best_epochs");
  const std::string best = dir + "/best.h5", metrics = dir + "/metrics.jsonl";
  std::uint64_t steps = 0;
  train(comm, data,
        {batch(comm), "best_output=" + best, "metrics_file=" + metrics, "checkpoint_dir=" + dir + "/ckpt",
         "checkpoint_every_epochs=1", "checkpoint_keep=100"},
        {}, &steps);
  const std::vector<double> val = metrics_field(metrics, "epoch", "val_loss");
  ASSERT_EQ(val.size(), kEpochs);
  const auto min_at = static_cast<std::uint64_t>(std::min_element(val.begin(), val.end()) - val.begin());
  // The deck really overfits: the choice is not simply the last (or the first) epoch.
  ASSERT_GT(min_at, 0u);
  ASSERT_LT(min_at + 1, kEpochs) << "the validation loss never rose";
  EXPECT_EQ(attribute(best, "best_epoch"), std::to_string(min_at + 1));
  EXPECT_NEAR(std::stod(attribute(best, "best_val_loss")), val[min_at], 1e-8 * std::abs(val[min_at]));
  // The file holds that epoch's weights: those of the checkpoint written at its end, bit for bit,
  // and the user's loader (init_weights, predict, the evaluation apps) reads them back unchanged.
  const h5::File c = h5::File::open_read(checkpoint_path(dir + "/ckpt", (min_at + 1) * steps));
  const std::vector<float> want = h5::read_all<float>(c, "params");
  NetworkTrainer loaded(make_deck(test::overfit_deck(data, kEpochs), {"init_weights=" + best}), comm);
  auto got = to_host(loaded.model().store().params());
  ASSERT_EQ(want.size(), got.extent(0));
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(want[i], got(i)) << "parameter " << i;
  // The checkpoint after the last epoch records the same choice.
  const CheckpointState last = inspect_checkpoint(checkpoint_path(dir + "/ckpt", kEpochs * steps));
  EXPECT_EQ(last.best_epoch, min_at + 1);
}

TEST(BestOutput, AStoppedAndResumedRunWritesTheSameFile) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "best_data", kRows);
  const std::string dir = hpct::test::empty_scratch_dir(comm, "best_resume");
  std::uint64_t steps = 0;
  train(comm, data, {batch(comm), "best_output=" + dir + "/full.h5"}, {}, &steps);
  const auto full = test::weight_tensors(dir + "/full.h5");
  // Stops mid-epoch early in the run and late in it (before and after the best epoch).
  for (const std::uint64_t stop_at : {steps + 1, (kEpochs - 1) * steps + 1}) {
    const std::string run = dir + "/stop" + std::to_string(stop_at), file = run + "/best.h5";
    const std::vector<std::string> keys = {batch(comm), "best_output=" + file, "checkpoint_dir=" + run};
    const TrainSummary stopped = test::overfit_train_stopped(comm, data, kEpochs, keys, run, stop_at);
    ASSERT_EQ(stopped.stop_signal, SIGUSR1);
    std::vector<std::string> resume = keys;
    resume.push_back("resume=auto");
    // Without the file the resumed run cannot rebuild the best epoch's weights: an error at the key.
    if (comm.rank() == 0) fs::rename(file, file + ".aside");
    comm.barrier();
    EXPECT_NE(error_message([&] {
                train(comm, data, resume);
              }).find("--set:2: best_output: '" + file + "' is missing"),
              std::string::npos);
    if (comm.rank() == 0) fs::rename(file + ".aside", file);
    comm.barrier();
    const TrainSummary resumed = train(comm, data, resume);
    EXPECT_EQ(resumed.stop_signal, 0);
    EXPECT_EQ(test::weight_tensors(file), full) << "stopped after step " << stop_at;
    EXPECT_EQ(attribute(file, "best_epoch"), attribute(dir + "/full.h5", "best_epoch"));
  }
}

TEST(BestOutput, MultiRank_TwoRanksChooseAndWriteAsOneRank) {
  const Comm world;
  const std::string data = hpct::test::friedman_file(world, "best_data", kRows);
  const std::string dir = hpct::test::empty_scratch_dir(world, "best_ranks");
  // rank_invariant: the same weights bit for bit at any rank count, so the files can be compared.
  const std::string one_file = dir + "/one" + std::to_string(world.rank()) + ".h5";
  {
    SelfComm self;
    const Comm one(self.raw);
    train(one, data, {"batch_size=16", "rank_invariant=true", "best_output=" + one_file});
  }
  train(world, data, {batch(world), "rank_invariant=true", "best_output=" + dir + "/world.h5"});
  EXPECT_EQ(test::weight_tensors(dir + "/world.h5"), test::weight_tensors(one_file));
  EXPECT_EQ(attribute(dir + "/world.h5", "best_epoch"), attribute(one_file, "best_epoch"));
}

TEST(BestOutput, NeedsAValidationSplit) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "best_data", kRows);
  const std::string msg = error_message([&] {
    train(comm, data, {batch(comm), "validation_fraction=0", "best_output=" + hpct::test::scratch("never.h5")});
  });
  EXPECT_EQ(msg.rfind("--set:3: best_output: needs a validation split", 0), 0u) << msg;
  EXPECT_FALSE(fs::exists(hpct::test::scratch("never.h5")));
}
