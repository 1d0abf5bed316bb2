// Rank-count independence of diffusion training: the same global batch on every world rank
// (batch 8 per rank) and on MPI_COMM_SELF (batch 4 x 2*P accumulation steps) gives the same
// normalisation statistics, losses and parameters after several optimizer steps.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/hdf5_tabular.hpp"
#include "models/diffusion/downscaling.hpp"
#include "test_paths.hpp"
#include "train/data_stats.hpp"
#include "train/driver.hpp"
#include "train/trainer.hpp"

namespace hpct {
namespace {

struct Outcome {
  std::vector<float> params;
  double train_loss = 0, val_loss = 0;
  std::uint64_t steps = 0;
};

std::string data_file() {
  static const std::string path = [] {
    const std::string p = hpct::test::binary_dir() + "/test/diffusion_ranks_data.h5";
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) write_downscaling(p, 104, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    return p;
  }();
  return path;
}

Outcome train(const Comm& comm, int batch, int accumulation, const std::string& optimizer) {
  const deck::Schema schema = full_schema();
  const std::string text =
      "model diffusion\n"
      "data_file " +
      data_file() +
      "\n"
      "inputs_dataset context\ntargets_dataset fine\nvalidation_fraction 0.25\n"
      "diffusion_hidden 32\ntime_embedding_dim 8\ndiffusion_depth 1\ndiffusion_steps 20\n"
      "epochs 3\nlog_every 1000\nseed 5\n"
      "batch_size " +
      std::to_string(batch) + "\naccumulation_steps " + std::to_string(accumulation) +
      "\n"
      "optimizer " +
      optimizer + "\nlr 0.02\nmomentum 0.9\n";
  const deck::Deck deck = deck::Deck::parse(text, "ranks_test.in", schema, {});
  NetworkTrainer trainer(deck, comm);
  const TrainSummary s = trainer.run();
  Outcome o;
  auto h = to_host(trainer.model().store().params());
  o.params.assign(h.data(), h.data() + trainer.model().store().count());
  o.train_loss = s.last_epoch_loss;
  o.val_loss = s.val_loss;
  o.steps = s.steps;
  return o;
}

void expect_same(const Outcome& a, const Outcome& b, double param_tol) {
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_NEAR(a.train_loss, b.train_loss, 1e-5 * std::fabs(b.train_loss));
  EXPECT_NEAR(a.val_loss, b.val_loss, 1e-5 * std::fabs(b.val_loss));
  ASSERT_EQ(a.params.size(), b.params.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.params.size(); ++i)
    worst = std::max(worst, double(std::fabs(a.params[i] - b.params[i])));
  EXPECT_LT(worst, param_tol) << "largest parameter difference";
}

TEST(DiffusionRanks, DataStatisticsDoNotDependOnRankCount) {
  const TabularSource src = describe_tabular(data_file(), "context", "fine");
  const DataStats w = compute_data_stats(TabularDataset(src), Comm(MPI_COMM_WORLD)),
                  s = compute_data_stats(TabularDataset(src), Comm(MPI_COMM_SELF));
  ASSERT_EQ(w.y_std.size(), 256u);
  for (std::size_t j = 0; j < 7; ++j) {
    EXPECT_NEAR(w.x_mean[j], s.x_mean[j], 1e-12);
    EXPECT_NEAR(w.x_std[j], s.x_std[j], 1e-12);
  }
  for (std::size_t j = 0; j < 256; ++j) {
    EXPECT_NEAR(w.y_mean[j], s.y_mean[j], 1e-12);
    EXPECT_NEAR(w.y_std[j], s.y_std[j], 1e-12);
    EXPECT_GT(w.y_std[j], 0.1);
  }
}

TEST(DiffusionRanks, SgdTrainsTheSameModelOnAnyRankCount) {
  const Comm world(MPI_COMM_WORLD), self(MPI_COMM_SELF);
  const Outcome distributed = train(world, 8, 1, "sgd");
  const Outcome local = train(self, 4, 2 * world.size(), "sgd");
  EXPECT_GT(distributed.steps, 5u);
  expect_same(distributed, local, 2e-6);
}

TEST(DiffusionRanks, AdamwTrainsTheSameModelOnAnyRankCount) {
  const Comm world(MPI_COMM_WORLD), self(MPI_COMM_SELF);
  const Outcome distributed = train(world, 8, 1, "adamw");
  const Outcome local = train(self, 4, 2 * world.size(), "adamw");
  // Adam divides by sqrt(v): gradients that differ in the last bits move parameters by more.
  expect_same(distributed, local, 2e-4);
}

}  // namespace
}  // namespace hpct
