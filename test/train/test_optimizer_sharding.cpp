// The sharded optimizer (optimizer_sharding, Note [optimizer sharding] in train/step.cpp): the same
// parameters as the unsharded step (bitwise without clipping at 2 ranks; within 1e-6 with it), for
// AdamW and SGD, the mlp and the diffusion model, with accumulation; checkpoints hold the whole state.
// Both transports: MPI collectives and the shared-memory window (comm_backend shm).
#include <gtest/gtest.h>

#include <filesystem>

#include "models/diffusion/downscaling.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::make_deck;
using hpct::test::relative_difference;

namespace {

std::vector<float> train_params(const Comm& comm, const std::string& text,
                                const std::vector<std::string>& overrides) {
  NetworkTrainer t(make_deck(text, overrides), comm);
  EXPECT_EQ(t.step_runner().sharded(), comm.size() > 1 && overrides.front() == "optimizer_sharding=true");
  t.run();
  auto h = to_host(t.model().store().params());
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

std::string mlp_deck(const Comm& comm) {
  const std::string data = hpct::test::friedman_file(comm, "sharding_np" + std::to_string(comm.size()), 403);
  // 32*10 + 32 + 16*32 + 16 + 16 + 1 = 897 parameters: odd, so the two slices differ in length.
  return "data_file " + data +
         "\nhidden_sizes 32,16\nactivation gelu\nepochs 2\nlr 0.01\nbatch_size 8\n"
         "accumulation_steps 2\nweight_decay 0.01\nmomentum 0.9\n";
}

void expect_bitwise(const Comm& comm, const std::string& deck, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> on{"optimizer_sharding=true"}, off{"optimizer_sharding=false"};
  on.insert(on.end(), extra.begin(), extra.end());
  off.insert(off.end(), extra.begin(), extra.end());
  auto with = [](std::vector<std::string> a, const std::string& b) {
    a.push_back(b);
    return a;
  };
  // Over MPI (reduce-scatter, all-gather) and through the shared-memory window (comm_backend shm).
  const auto sharded = train_params(comm, deck, with(on, "comm_backend=mpi"));
  const auto sharded_shm = train_params(comm, deck, with(on, "comm_backend=shm"));
  const auto plain = train_params(comm, deck, with(off, "comm_backend=mpi"));
  ASSERT_EQ(sharded, plain);
  ASSERT_EQ(sharded_shm, plain);
  // The runs trained: the parameters moved.
  const auto untrained = train_params(comm, deck, {"optimizer_sharding=false", "lr=0"});
  EXPECT_GT(relative_difference(plain, untrained), 1e-3);
}

}  // namespace

TEST(OptimizerSharding, AdamwMlpIsBitwiseTheUnshardedStep) {
  const Comm comm;
  expect_bitwise(comm, mlp_deck(comm));
}

TEST(OptimizerSharding, SgdMomentumMlpIsBitwiseTheUnshardedStep) {
  const Comm comm;
  expect_bitwise(comm, mlp_deck(comm), {"optimizer=sgd"});
}

// fp16: the slices are unscaled before the norm; the loss scaler decides on the global norm.
TEST(OptimizerSharding, Fp16WithLossScalingIsBitwiseTheUnshardedStep) {
  const Comm comm;
  expect_bitwise(comm, mlp_deck(comm), {"precision=fp16", "loss_scale_init=1e8", "loss_scale_growth_interval=3"});
}

TEST(OptimizerSharding, DiffusionIsBitwiseTheUnshardedStep) {
  const Comm comm;
  const std::string data = hpct::test::scratch("sharding_diffusion_np" + std::to_string(comm.size()) + ".h5");
  if (comm.rank() == 0) write_downscaling(data, 300, 1);
  comm.barrier();
  expect_bitwise(comm, "model diffusion\ndata_file " + data +
                           "\ninputs_dataset context\ntargets_dataset fine\n"
                           "diffusion_hidden 32\nbatch_size 8\naccumulation_steps 2\nepochs 1\n");
}

// Clipping uses the global norm summed from the two slices' squared norms: another association of
// the fp64 sum than the unsharded one.
TEST(OptimizerSharding, ClippingMatchesWithinRounding) {
  const Comm comm;
  const std::string deck = mlp_deck(comm);
  const auto sharded = train_params(comm, deck,
                                    {"optimizer_sharding=true", "clip_grad_norm=0.05", "comm_backend=mpi"});
  const auto plain = train_params(comm, deck, {"optimizer_sharding=false", "clip_grad_norm=0.05"});
  EXPECT_LT(relative_difference(plain, sharded), 1e-6);
  // shm sums the slices' norms in rank order, as MPI's sum of two does: bitwise the MPI sharded step.
  const auto sharded_shm = train_params(comm, deck,
                                        {"optimizer_sharding=true", "clip_grad_norm=0.05", "comm_backend=shm"});
  EXPECT_EQ(sharded_shm, sharded);
  const auto unclipped = train_params(comm, deck, {"optimizer_sharding=false"});
  EXPECT_GT(relative_difference(plain, unclipped), 1e-3) << "clipping must be active in this test";
}

// Checkpoints hold the whole optimizer state (gathered on rank 0): a sharded run resumes bitwise,
// and a checkpoint of a sharded run resumes unsharded (and the reverse) to the same parameters.
TEST(OptimizerSharding, ResumeIsBitwiseAndCheckpointsAreInterchangeable) {
  const Comm comm;
  const std::string deck = mlp_deck(comm);
  const std::string dir = hpct::test::scratch("sharding_ckpt_np" + std::to_string(comm.size()));
  if (comm.rank() == 0) std::filesystem::remove_all(dir);
  comm.barrier();
  const std::vector<std::string> save{"checkpoint_dir=" + dir, "checkpoint_every_steps=5", "checkpoint_keep=100"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const auto full = train_params(comm, deck, with({"optimizer_sharding=true"}, save));
  const std::string ckpt = "resume=" + dir + "/ckpt-000000015.h5";
  EXPECT_EQ(train_params(comm, deck, {"optimizer_sharding=true", ckpt}), full);
  EXPECT_EQ(train_params(comm, deck, {"optimizer_sharding=false", ckpt}), full);
  EXPECT_EQ(train_params(comm, deck, {"optimizer_sharding=true", ckpt, "comm_backend=mpi"}), full);
  // An unsharded run's checkpoint resumed sharded.
  if (comm.rank() == 0) std::filesystem::remove_all(dir);
  comm.barrier();
  train_params(comm, deck, with({"optimizer_sharding=false"}, save));
  EXPECT_EQ(train_params(comm, deck, {"optimizer_sharding=true", ckpt}), full);
}
