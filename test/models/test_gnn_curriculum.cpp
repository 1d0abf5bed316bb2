// The gnn's rollout curriculum (`ar_steps_schedule`, Note [rollout curriculum]) through the
// trainer on the wxgen file of fixture gnn_wx_data: a one-stage schedule of all the targets is the
// plain rollout training bit for bit, a growing schedule trains differently, 1 rank x batch 8 ==
// world x batch 8 / ranks, a checkpoint taken inside the middle stage resumes bitwise, and the
// key's errors name file:line:key; the same with gnn_output day_before_blend.
#include <gtest/gtest.h>

#include <filesystem>
#include <utility>

#include "core/log.hpp"
#include "io/hdf5.hpp"
#include "models/gnn_training.hpp"
#include "models/registry.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::relative_difference;
using hpct::test::SelfComm;

namespace {
// The gnn training tests' deck (models/gnn_training.hpp) through 3-step rollouts over 3 epochs.
const std::vector<std::string> kRollout = {"ar_steps=3", "epochs=3"};

std::vector<float> train(const Comm& comm, std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), kRollout.begin(), kRollout.end());
  return hpct::test::train_gnn(comm, overrides);
}
}  // namespace

TEST(GnnCurriculum, StagesTrainTheirStepsAndMatchAcrossRanks) {
  const Comm world;
  SelfComm self;
  const Comm one(self.raw);
  // A schedule of every target from epoch 1 is the plain ar_steps 3 training, bit for bit.
  const auto plain = train(one, {"batch_size=8"});
  EXPECT_EQ(train(one, {"batch_size=8", "ar_steps_schedule=1:3"}), plain);
  // Growing stages train another model; so does each stage when it differs (1 step, then 2, 3).
  const std::string grow = "ar_steps_schedule=1:1,2:2,3:3";
  const auto reference = train(one, {"batch_size=8", grow});
  EXPECT_GT(relative_difference(plain, reference), 1e-3);
  EXPECT_GT(relative_difference(reference, train(one, {"batch_size=8", "ar_steps_schedule=1:1,2:3"})), 1e-4);
  const auto world_run = train(world, {"batch_size=" + std::to_string(8 / world.size()), grow});
  EXPECT_LT(relative_difference(reference, world_run), 1e-6);
}

TEST(GnnCurriculum, ACheckpointInsideAStageResumesBitwise) {
  const Comm world;
  const std::string dir = hpct::test::empty_scratch_dir(world,
                                                        "gnn_curriculum_ckpt_np" + std::to_string(world.size()));
  const std::string bs = "batch_size=" + std::to_string(4 / world.size());
  const std::string grow = "ar_steps_schedule=1:1, 2:2, 3:3";
  const auto full = train(world,
                          {bs, grow, "checkpoint_dir=" + dir, "checkpoint_every_steps=3", "checkpoint_keep=100"});
  // A checkpoint inside epoch 2 (the 2-step stage): some of its steps done, and the next
  // checkpoint still in epoch 2.
  const auto position = [&](int step) {  // (0-based epoch, steps done in it); (-1, 0) when absent
    const std::string path = dir + "/ckpt-" + strf("%09d", step) + ".h5";
    if (!std::filesystem::exists(path)) return std::make_pair(-1LL, 0LL);
    const h5::File f = h5::File::open_read(path);
    return std::make_pair(static_cast<long long>(h5::read_attr_int(f, "/", "epoch")),
                          static_cast<long long>(h5::read_attr_int(f, "/", "epoch_steps")));
  };
  std::string middle;
  for (int step = 3; step < 60 && middle.empty(); step += 3) {
    const auto here = position(step), next = position(step + 3);
    if (here.first == 1 && here.second > 0 && next.first == 1) middle = dir + "/ckpt-" + strf("%09d", step) + ".h5";
  }
  ASSERT_FALSE(middle.empty()) << "no checkpoint inside epoch 2 in " << dir;
  EXPECT_EQ(train(world, {bs, grow, "resume=" + middle}), full);
}

TEST(GnnCurriculum, ScheduleErrorsNameFileLineAndKey) {
  const Comm comm;
  const auto error = [&](const std::string& schedule) {
    return hpct::test::error_message([&] {
      std::vector<std::string> overrides = kRollout;
      overrides.push_back("batch_size=4");
      NetworkTrainer t(hpct::test::make_deck(hpct::test::kGnnDeck + "ar_steps_schedule " + schedule + "\n",
                                             overrides),
                       comm);
    });
  };
  const std::string at = "test.in:15: ar_steps_schedule";  // the schedule's line in the deck
  for (const auto& [schedule, says] : std::vector<std::pair<std::string, std::string>>{
           {"1:1, 2", "'2' is not EPOCH:STEPS"},
           {"1:0", "'1:0' is not EPOCH:STEPS"},
           {"1:x", "'1:x' is not EPOCH:STEPS"},
           {"2:1, 3:3", "starts at epoch 2; it must start at epoch 1"},
           {"1:1, 3:2, 3:3", "the epochs must increase"},
           {"1:1, 2:6", "stage 2:6 rolls out 6 steps, but the samples hold ar_steps 3 targets; set ar_steps 6"},
           {"1:1, 4:3", "stage 4:3 starts after the run's last epoch (epochs 3)"}}) {
    const std::string e = error(schedule);
    EXPECT_NE(e.find(at), std::string::npos) << schedule << ": " << e;
    EXPECT_NE(e.find(says), std::string::npos) << schedule << ": " << e;
  }
}

// gnn_output day_before_blend (Note [day-before blend]) through the trainer on the wxgen file, with
// the state a day before derived: the curriculum trains another model than the increment output,
// resumes bitwise from a checkpoint inside the 3-step stage, and its weights file rebuilds the
// model (the stored gnn_output and the 2 outputs per state variable). Without state_day_before
// among the derived forcings the key's error names file:line:key.
TEST(GnnCurriculum, DayBeforeBlendTrainsResumesAndReloads) {
  const Comm world;
  const std::string dir = hpct::test::empty_scratch_dir(world, "gnn_blend_ckpt_np" + std::to_string(world.size()));
  const std::string out = dir + "/weights.h5";
  const std::vector<std::string> blend = {"batch_size=" + std::to_string(4 / world.size()),
                                          "derived_forcings=state_day_before", "ar_steps_schedule=1:1, 2:3",
                                          "gnn_output=day_before_blend"};
  const auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), blend.begin(), blend.end());
    return more;
  };
  const auto full = train(world, with({"checkpoint_dir=" + dir, "checkpoint_every_steps=2", "checkpoint_keep=100",
                                       "output=" + out}));
  std::vector<std::string> increment = blend;
  increment.back() = "gnn_output=increment";
  EXPECT_NE(train(world, increment).size(), full.size());  // the gate's outputs: more read-out parameters
  std::string middle;
  for (int step = 2; step < 40 && middle.empty(); step += 2) {
    const std::string path = dir + "/ckpt-" + strf("%09d", step) + ".h5";
    if (!std::filesystem::exists(path)) continue;
    const h5::File f = h5::File::open_read(path);
    if (h5::read_attr_int(f, "/", "epoch") == 1 && h5::read_attr_int(f, "/", "epoch_steps") > 0) middle = path;
  }
  ASSERT_FALSE(middle.empty()) << "no checkpoint inside epoch 2 in " << dir;
  EXPECT_EQ(train(world, with({"resume=" + middle})), full);
  const std::unique_ptr<Model> m = load_model(out, 4);
  EXPECT_NE(m->config_string().find("gnn_output=day_before_blend"), std::string::npos) << m->config_string();
  const auto h = to_host(m->store().params());
  EXPECT_EQ(std::vector<float>(h.data(), h.data() + h.extent(0)), full);
  const std::string e = hpct::test::error_message([&] {
    NetworkTrainer t(hpct::test::make_deck(hpct::test::kGnnDeck + "gnn_output day_before_blend\n", {"ar_steps=3"}),
                     world);
  });
  EXPECT_NE(e.find("test.in:15: gnn_output"), std::string::npos) << e;
  EXPECT_NE(e.find("add state_day_before to derived_forcings"), std::string::npos) << e;
}

// gnn_output day_before_anomaly (Note [day-before anomaly]) through the trainer with both derived
// day-before forcings: it trains another model than the blend on the same inputs, its weights file
// rebuilds it (the stored gnn_output), and without tendency_day_before the key's error names
// file:line:key.
TEST(GnnCurriculum, DayBeforeAnomalyTrainsAndReloads) {
  const Comm world;
  const std::string dir = hpct::test::empty_scratch_dir(world, "gnn_anomaly_np" + std::to_string(world.size()));
  const std::string out = dir + "/weights.h5";
  std::vector<std::string> keys = {"batch_size=" + std::to_string(4 / world.size()),
                                   "derived_forcings=state_day_before, tendency_day_before",
                                   "ar_steps_schedule=1:1, 2:3", "gnn_output=day_before_blend"};
  const auto blend = train(world, keys);
  keys.back() = "gnn_output=day_before_anomaly";
  keys.push_back("output=" + out);
  const auto anomaly = train(world, keys);
  ASSERT_EQ(anomaly.size(), blend.size());  // the same network, another output
  EXPECT_NE(anomaly, blend);
  const std::unique_ptr<Model> m = load_model(out, 4);
  EXPECT_NE(m->config_string().find("gnn_output=day_before_anomaly"), std::string::npos) << m->config_string();
  const auto h = to_host(m->store().params());
  EXPECT_EQ(std::vector<float>(h.data(), h.data() + h.extent(0)), anomaly);
  const std::string e = hpct::test::error_message([&] {
    NetworkTrainer t(hpct::test::make_deck(hpct::test::kGnnDeck + "gnn_output day_before_anomaly\n",
                                           {"ar_steps=3", "derived_forcings=state_day_before"}),
                     world);
  });
  EXPECT_NE(e.find("test.in:15: gnn_output"), std::string::npos) << e;
  EXPECT_NE(e.find("add tendency_day_before to derived_forcings"), std::string::npos) << e;
}
