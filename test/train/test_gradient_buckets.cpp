// The bucketed, overlapped gradient all-reduce (comm/gradient_reducer.hpp): the bucket plan, and
// that training with buckets gives bitwise the parameters of the single all-reduce (Note [buckets
// are exact]) for the mlp and the diffusion model with accumulation, that resume stays bitwise, and
// that buckets really start during backward on 2 ranks. The shared-memory reducer (comm_backend
// shm) is held to the same results.
#include <gtest/gtest.h>

#include <filesystem>

#include "comm/gradient_reducer.hpp"
#include "models/diffusion/downscaling.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::make_deck;

namespace {

std::uint64_t covered(const std::vector<GradientBucket>& buckets, std::uint64_t total) {
  std::uint64_t end = total;
  for (const GradientBucket& b : buckets) {
    EXPECT_EQ(b.offset + b.count, end) << "buckets must be contiguous reverse ranges";
    EXPECT_GT(b.count, 0u);
    end = b.offset;
  }
  return end;
}

struct RunResult {
  std::vector<float> params;
  std::size_t buckets = 0, started_during_backward = 0;
  std::string backend;
};

RunResult train(const Comm& comm, const std::string& text, const std::vector<std::string>& overrides) {
  NetworkTrainer t(make_deck(text, overrides), comm);
  t.run();
  RunResult r;
  auto h = to_host(t.model().store().params());
  r.params.assign(h.data(), h.data() + h.extent(0));
  r.backend = t.step_runner().comm_backend();
  if (const GradientReducer* g = t.step_runner().gradient_reducer()) {
    r.buckets = g->buckets().size();
    r.started_during_backward = g->started_during_backward();
  }
  return r;
}

std::string mlp_deck(const Comm& comm) {
  const std::string data = hpct::test::friedman_file(comm, "buckets_np" + std::to_string(comm.size()), 403);
  return "data_file " + data +
         "\nhidden_sizes 32,16\nactivation gelu\nepochs 2\nlr 0.01\nbatch_size 8\n"
         "accumulation_steps 2\nclip_grad_norm 1\nweight_decay 0.01\n";
}

std::string diffusion_deck(const Comm& comm) {
  const std::string data = hpct::test::scratch("buckets_diffusion_np" + std::to_string(comm.size()) + ".h5");
  if (comm.rank() == 0) write_downscaling(data, 300, 1);
  comm.barrier();
  return "model diffusion\ndata_file " + data +
         "\ninputs_dataset context\ntargets_dataset fine\n"
         "diffusion_hidden 32\nbatch_size 8\naccumulation_steps 2\nepochs 1\n";
}

// bucket_mb 0.0001: 26 floats, so most tensors end a bucket, and the mlp's buckets cut layers
// between their weight and bias (the watermark must handle it).
// comm_backend shm (comm/shared_memory_reducer.hpp) sums in rank order, which at 2 ranks is MPI's a + b:
// bitwise too, with ranges published during backward and without.
void expect_buckets_bitwise(const Comm& comm, const std::string& deck_text) {
  const std::string deck = deck_text + "comm_backend mpi\n";
  const RunResult single = train(comm, deck, {"bucket_mb=0"});
  const RunResult bucketed = train(comm, deck, {"bucket_mb=0.0001"});
  const RunResult after_backward = train(comm, deck, {"bucket_mb=0.0001", "overlap_allreduce=false"});
  const RunResult one_bucket = train(comm, deck, {});  // default 25 MiB: the first (1 MiB) bucket holds all
  const RunResult shm = train(comm, deck, {"comm_backend=shm"});
  const RunResult shm_after_backward = train(comm, deck, {"comm_backend=shm", "overlap_allreduce=false"});
  ASSERT_EQ(bucketed.params, single.params);
  ASSERT_EQ(after_backward.params, single.params);
  ASSERT_EQ(one_bucket.params, single.params);
  ASSERT_EQ(shm.params, single.params);
  ASSERT_EQ(shm_after_backward.params, single.params);
  EXPECT_EQ(shm.backend, comm.size() > 1 ? "shm" : "mpi");
  EXPECT_EQ(bucketed.backend, "mpi");
  if (comm.size() > 1) {
    EXPECT_GT(bucketed.buckets, 3u);
    // The last layers' buckets started while earlier layers were still in backward.
    EXPECT_GT(bucketed.started_during_backward, 1u);
    EXPECT_EQ(after_backward.started_during_backward, 0u);
    EXPECT_EQ(one_bucket.buckets, 1u);
  } else {
    EXPECT_EQ(bucketed.buckets, 0u) << "one rank communicates nothing";
  }
}

}  // namespace

TEST(GradientBuckets, PlanCoversTheBufferInReverseAtTensorBoundaries) {
  // Tensors of 100, 20, 1000, 30, 400 floats at offsets 0, 100, 120, 1120, 1150; total 1550.
  const std::vector<std::uint64_t> offsets{0, 100, 120, 1120, 1150};
  const double f = sizeof(float);
  // First bucket target 40 floats: the last tensor (400) alone; then 500 floats: 30 + 1000; then the rest.
  const auto b = plan_gradient_buckets(offsets, 1550, 500 * f, 40 * f);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].offset, 1150u);
  EXPECT_EQ(b[1].offset, 120u);
  EXPECT_EQ(b[2].offset, 0u);
  EXPECT_EQ(covered(b, 1550), 0u);
  // Tiny buckets: one per tensor, never a split tensor.
  const auto tiny = plan_gradient_buckets(offsets, 1550, 1, 1);
  ASSERT_EQ(tiny.size(), offsets.size());
  for (std::size_t i = 0; i < tiny.size(); ++i) EXPECT_EQ(tiny[i].offset, offsets[offsets.size() - 1 - i]);
  // Off (0) or huge: one bucket.
  EXPECT_EQ(plan_gradient_buckets(offsets, 1550, 0, 1e6).size(), 1u);
  EXPECT_EQ(plan_gradient_buckets(offsets, 1550, 1e9, 1e9).size(), 1u);
  EXPECT_TRUE(plan_gradient_buckets({0}, 0, 100, 100).empty());
}

TEST(GradientBuckets, PlanSplitsOnlyTensorsAboveTheMpiCountLimit) {
  const std::uint64_t max = GradientReducer::kMaxBucketElements;
  const auto b = plan_gradient_buckets({0, 10}, 10 + 2 * max + 5, 1e12, 1e12);
  // max, max, then the tensor's remaining 5 floats with the first tensor's 10.
  ASSERT_EQ(b.size(), 3u);
  for (const auto& x : b) EXPECT_LE(x.count, max);
  EXPECT_EQ(b.back().offset, 0u);
  EXPECT_EQ(b.back().count, 15u);
  EXPECT_EQ(covered(b, 10 + 2 * max + 5), 0u);
}

TEST(GradientBuckets, MlpWithAccumulationIsBitwiseTheSingleAllreduce) {
  const Comm comm;
  expect_buckets_bitwise(comm, mlp_deck(comm));
}

// fp16: the buckets carry loss-scaled gradients, some steps overflow and are skipped.
TEST(GradientBuckets, Fp16MlpIsBitwiseTheSingleAllreduce) {
  const Comm comm;
  expect_buckets_bitwise(comm,
                         mlp_deck(comm) + "precision fp16\nloss_scale_init 1e8\nloss_scale_growth_interval 3\n");
}

TEST(GradientBuckets, DiffusionWithAccumulationIsBitwiseTheSingleAllreduce) {
  const Comm comm;
  expect_buckets_bitwise(comm, diffusion_deck(comm));
}

TEST(GradientBuckets, ResumeWithBucketsIsBitwise) {
  const Comm comm;
  const std::string dir = hpct::test::scratch("buckets_ckpt_np" + std::to_string(comm.size()));
  if (comm.rank() == 0) std::filesystem::remove_all(dir);
  comm.barrier();
  const std::string deck = mlp_deck(comm) + "comm_backend mpi\n";
  // 363 training rows / global batch 16 (8 per rank at 2 ranks, 2 micro-steps of 8 at 1 rank ...).
  const RunResult full = train(comm, deck,
                               {"bucket_mb=0.0001", "checkpoint_dir=" + dir, "checkpoint_every_steps=5",
                                "checkpoint_keep=100"});
  const RunResult single = train(comm, deck, {"bucket_mb=0"});
  ASSERT_EQ(full.params, single.params);
  const RunResult resumed = train(comm, deck, {"bucket_mb=0.0001", "resume=" + dir + "/ckpt-000000015.h5"});
  ASSERT_EQ(resumed.params, full.params);
  // A checkpoint written with MPI resumes bitwise with the shared-memory reducer.
  const RunResult resumed_shm = train(comm, deck, {"comm_backend=shm", "resume=" + dir + "/ckpt-000000015.h5"});
  ASSERT_EQ(resumed_shm.params, full.params);
}
