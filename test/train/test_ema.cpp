// The EMA of the weights (ema_decay, optim/ema.hpp): its update against a reference computed here
// from the recorded parameter sequence (LitEma's form of the update, the decay schedule written out),
// the warm-up schedule, skipped fp16 steps, ZeRO-1 sharded == unsharded bitwise, 1 rank == 2 ranks,
// bitwise resume, validation on the EMA, and the weights file's two sets read back by load_model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/hdf5.hpp"
#include "models/registry.hpp"
#include "optim/ema.hpp"
#include "support/test_support.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::error_message;
using hpct::test::make_deck;
using hpct::test::relative_difference;
using hpct::test::SelfComm;

namespace {

// 897 parameters (odd: the two shards of 2 ranks differ in length).
const char* kBase = "hidden_sizes 32,16\nactivation gelu\nepochs 2\nlr 0.01\nvalidation_fraction 0.1\n";

std::vector<float> host_params(NetworkTrainer& t) {
  auto h = to_host(t.model().store().params());
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

struct EmaRun {
  std::vector<float> initial, params, ema;
  std::vector<std::vector<float>> sequence;  // the parameters after every step
  std::vector<bool> applied;                 // whether that step updated them
  std::uint64_t updates = 0;
  double val_loss = 0;
};

// Global batch 16 (46 steps over the 2 epochs of 363 training rows) unless the overrides set batch_size.
EmaRun train(const Comm& comm, const std::string& data, std::vector<std::string> overrides, bool record = false) {
  if (std::none_of(overrides.begin(), overrides.end(),
                   [](const std::string& o) { return o.rfind("batch_size=", 0) == 0; }))
    overrides.insert(overrides.begin(), "batch_size=" + std::to_string(16 / comm.size()));
  NetworkTrainer t(make_deck("data_file " + data + "\n" + kBase, overrides), comm);
  EmaRun r;
  r.initial = host_params(t);
  std::uint64_t taken = t.step_runner().optimizer().steps_taken();
  if (record)
    t.set_step_hook([&](std::uint64_t) {
      const std::uint64_t now = t.step_runner().optimizer().steps_taken();
      r.applied.push_back(now != taken);
      taken = now;
      r.sequence.push_back(host_params(t));
    });
  r.val_loss = t.run().val_loss;
  r.params = host_params(t);
  r.ema = t.step_runner().ema_values(true);
  r.updates = t.step_runner().ema() ? t.step_runner().ema()->updates() : 0;
  return r;
}

// The EMA written out independently of optim/ema.cpp: LitEma's `s -= (1 - d) (s - p)` over the
// recorded parameters, d = min(decay, (1 + k) / (10 + k)) at the k-th applied step.
std::vector<float> reference_ema(const EmaRun& r, double decay, bool warmup) {
  std::vector<float> s = r.initial;
  std::uint64_t k = 0;
  for (std::size_t i = 0; i < r.sequence.size(); ++i) {
    if (!r.applied[i]) continue;
    ++k;
    const double d = warmup ? std::min(decay, (1.0 + double(k)) / (10.0 + double(k))) : decay;
    const float w = static_cast<float>(1.0 - d);
    for (std::size_t j = 0; j < s.size(); ++j) s[j] -= w * (s[j] - r.sequence[i][j]);
  }
  return s;
}

std::string fresh_dir(const Comm& comm, const std::string& name) {
  return hpct::test::empty_scratch_dir(comm, "ema_" + name + "_np" + std::to_string(comm.size()));
}

}  // namespace

TEST(Ema, WarmupScheduleIsTensorflowsAndLitEmas) {
  optim::EmaConfig c;
  c.decay = 0.999;
  EXPECT_DOUBLE_EQ(optim::ema_decay_at(c, 1), 2.0 / 11.0);
  EXPECT_DOUBLE_EQ(optim::ema_decay_at(c, 90), 91.0 / 100.0);
  // Full decay once (1 + k) / (10 + k) >= 0.999: k >= 8990.
  EXPECT_LT(optim::ema_decay_at(c, 8989), 0.999);
  EXPECT_DOUBLE_EQ(optim::ema_decay_at(c, 8990), 0.999);
  EXPECT_DOUBLE_EQ(optim::ema_decay_at(c, 1000000), 0.999);
  c.warmup = false;
  EXPECT_DOUBLE_EQ(optim::ema_decay_at(c, 1), 0.999);
}

// Both schedules, SGD with momentum and AdamW: the EMA is bitwise the reference over the run's own
// parameter sequence, and differs from the trained weights.
TEST(Ema, UpdateIsBitwiseTheReferenceOverTheParameterSequence) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ema_ref", 403);
  for (const char* warmup : {"true", "false"})
    for (const char* opt : {"adamw", "sgd"}) {
      const EmaRun r = train(comm, data,
                             {"ema_decay=0.9", std::string("ema_warmup=") + warmup, std::string("optimizer=") + opt,
                              "momentum=0.9"},
                             true);
      ASSERT_EQ(r.sequence.size(), 46u);
      EXPECT_EQ(r.updates, 46u);
      EXPECT_EQ(r.ema, reference_ema(r, 0.9, std::string(warmup) == "true")) << warmup << " " << opt;
      EXPECT_GT(relative_difference(r.params, r.ema), 1e-4);
    }
}

// ema_decay 0 (the default) keeps no EMA and trains the same parameters as an EMA run.
TEST(Ema, OffByDefaultAndTheTrainedWeightsDoNotDependOnIt) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ema_off", 403);
  const EmaRun off = train(comm, data, {});
  const EmaRun on = train(comm, data, {"ema_decay=0.99", "validation_weights=raw"});
  EXPECT_TRUE(off.ema.empty());
  EXPECT_EQ(off.params, on.params);
  EXPECT_EQ(off.val_loss, on.val_loss);  // validation on the trained weights: the same loss
}

// fp16 steps whose gradients overflow are skipped: the EMA does not move on them.
TEST(Ema, Fp16OverflowStepsLeaveItUnchanged) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ema_fp16", 403);
  const EmaRun r = train(comm, data,
                         {"ema_decay=0.95", "precision=fp16", "loss_scale_init=1e8",
                          "loss_scale_growth_interval=3"},
                         true);
  const auto skipped = std::count(r.applied.begin(), r.applied.end(), false);
  ASSERT_GT(skipped, 0);
  ASSERT_GT(r.sequence.size() - static_cast<std::size_t>(skipped), 10u);
  EXPECT_EQ(r.updates, r.sequence.size() - static_cast<std::size_t>(skipped));
  EXPECT_EQ(r.ema, reference_ema(r, 0.95, true));
}

// ZeRO-1: each rank averages its slice; gathered, bitwise the unsharded EMA (over MPI and shm).
TEST(Ema, ShardedIsBitwiseUnsharded) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ema_shard", 403);
  const EmaRun plain = train(comm, data, {"ema_decay=0.9", "optimizer_sharding=false"});
  const EmaRun sharded = train(comm, data, {"ema_decay=0.9", "optimizer_sharding=true", "comm_backend=mpi"});
  const EmaRun sharded_shm = train(comm, data, {"ema_decay=0.9", "optimizer_sharding=true", "comm_backend=shm"});
  ASSERT_EQ(plain.ema.size(), plain.params.size());
  EXPECT_EQ(sharded.ema, plain.ema);
  EXPECT_EQ(sharded_shm.ema, plain.ema);
  EXPECT_EQ(sharded.val_loss, plain.val_loss);  // validation on the gathered EMA
}

// 2 ranks with batch B and 1 rank with 2B: the EMA agrees as the weights do (docs/data-parallel.md),
// and on the world's ranks it is bitwise the reference over the world's own parameters.
TEST(Ema, MultiRank_WorldMatchesOneRank) {
  const Comm world;
  const std::string data = hpct::test::friedman_file(world, "ema_equiv", 403);
  SelfComm self;
  const Comm one(self.raw);
  const EmaRun ref = train(one, data, {"batch_size=16", "ema_decay=0.9"});
  const EmaRun w = train(world, data, {"batch_size=" + std::to_string(16 / world.size()), "ema_decay=0.9"}, true);
  EXPECT_LT(relative_difference(ref.ema, w.ema), 1e-6);
  EXPECT_EQ(w.ema, reference_ema(w, 0.9, true));
}

// Validation evaluates the EMA by default: another loss than on the trained weights, and the
// trained weights are back in place afterwards (training continues from them).
TEST(Ema, ValidationUsesTheEmaUnlessToldRaw) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ema_val", 403);
  const EmaRun ema = train(comm, data, {"ema_decay=0.9"});
  const EmaRun raw = train(comm, data, {"ema_decay=0.9", "validation_weights=raw"});
  const EmaRun none = train(comm, data, {});
  EXPECT_EQ(ema.params, none.params);
  EXPECT_EQ(raw.val_loss, none.val_loss);
  EXPECT_NE(ema.val_loss, raw.val_loss);
}

// Resume from mid-epoch and epoch-boundary checkpoints (sharded or not): the parameters and the EMA
// are bitwise the uninterrupted run's; the checkpoint holds the EMA under its checksum.
TEST(Ema, ResumeIsBitwise) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ema_resume", 403);
  const std::string dir = fresh_dir(comm, "resume");
  const EmaRun full = train(comm, data,
                            {"ema_decay=0.95", "checkpoint_dir=" + dir, "checkpoint_every_steps=10",
                             "checkpoint_keep=100"});
  char name[64];
  for (int step : {10, 40}) {
    std::snprintf(name, sizeof(name), "/ckpt-%09d.h5", step);
    const CheckpointState st = inspect_checkpoint(dir + name);
    EXPECT_EQ(st.ema.size(), full.params.size());
    EXPECT_EQ(st.ema_updates, static_cast<std::uint64_t>(step));
    for (const char* sharding : {"false", "true"}) {
      const EmaRun resumed = train(comm, data,
                                   {"ema_decay=0.95", std::string("resume=") + dir + name,
                                    std::string("optimizer_sharding=") + sharding});
      EXPECT_EQ(resumed.params, full.params) << step;
      EXPECT_EQ(resumed.ema, full.ema) << step << " sharding " << sharding;
      EXPECT_EQ(resumed.val_loss, full.val_loss);
    }
  }
  // A checkpoint without an EMA, resumed with ema_decay: the EMA starts at the restored weights.
  const std::string plain_dir = fresh_dir(comm, "resume_plain");
  train(comm, data, {"checkpoint_dir=" + plain_dir, "checkpoint_every_steps=10", "checkpoint_keep=100"});
  const EmaRun started = train(comm, data, {"ema_decay=0.95", "resume=" + plain_dir + "/ckpt-000000040.h5"});
  EXPECT_EQ(started.updates, 6u);
  EXPECT_EQ(started.params, train(comm, data, {}).params);
}

// The weights file holds both sets; load_model takes the EMA by default, either on request, and
// refuses `ema` from a file without one.
TEST(Ema, WeightsFileHoldsBothSetsAndReadersChoose) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "ema_weights", 403);
  const std::string with = hpct::test::scratch("ema_weights_with_np" + std::to_string(comm.size()) + ".h5");
  const std::string without = hpct::test::scratch("ema_weights_without_np" + std::to_string(comm.size()) + ".h5");
  const EmaRun r = train(comm, data, {"ema_decay=0.9", "output=" + with});
  train(comm, data, {"output=" + without});
  auto params_of = [](const std::unique_ptr<Model>& m) {
    auto h = to_host(m->store().params());
    return std::vector<float>(h.data(), h.data() + h.extent(0));
  };
  std::string set;
  EXPECT_EQ(params_of(load_model(with, 8, nn::WeightsChoice::preferred, &set)), r.ema);
  EXPECT_EQ(set, "ema");
  EXPECT_EQ(params_of(load_model(with, 8, nn::WeightsChoice::ema)), r.ema);
  EXPECT_EQ(params_of(load_model(with, 8, nn::WeightsChoice::raw, &set)), r.params);
  EXPECT_EQ(set, "raw");
  EXPECT_EQ(params_of(load_model(without, 8, nn::WeightsChoice::preferred, &set)), r.params);
  EXPECT_EQ(set, "raw");
  EXPECT_EQ(error_message([&] { load_model(without, 8, nn::WeightsChoice::ema); }),
            without + ": holds no EMA weights (the run had ema_decay 0); use --weights raw");
  const h5::File f = h5::File::open_read(with);
  EXPECT_EQ(h5::read_attr_string(f, "/", "ema"), "decay=0.90000000000000002 warmup=true updates=46");
  EXPECT_EQ(error_message([] { nn::weights_choice("best", "predict: --weights"); }),
            "predict: --weights: 'best' is not ema or raw");
}
