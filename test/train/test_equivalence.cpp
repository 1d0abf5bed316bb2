// Data parallelism is exact: 1 rank with global batch 2B and 2 ranks with batch B (and any split
// into accumulation micro-batches) train the same parameters, within float reduction order.
#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::make_deck;
using hpct::test::relative_difference;
using hpct::test::SelfComm;

namespace {

std::vector<float> train_params(const Comm& comm, const std::string& data, const std::string& extra,
                                const std::vector<std::string>& overrides = {}) {
  const deck::Deck deck = make_deck("data_file " + data +
                                        "\nhidden_sizes 16,16\nactivation tanh\nepochs 2\nlr 0.01\n"
                                        "validation_fraction 0.1\n" +
                                        extra,
                                    overrides);
  NetworkTrainer t(deck, comm);
  t.run();
  auto h = to_host(t.model().store().params());
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}


}  // namespace

class Equivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(Equivalence, WorldRanksMatchOneRankWithTheSameGlobalBatch) {
  const Comm world;
  const std::string& optimizer = GetParam();
  // 403 rows: the last step of each epoch is partial, so the tail handling is covered too.
  const std::string data = hpct::test::friedman_file(world, "equiv", 403);
  const int p = world.size();
  SelfComm self;
  const Comm one(self.raw);
  const std::string opt = "optimizer " + optimizer + "\nmomentum 0.9\nweight_decay 0.01\nclip_grad_norm 5\n";
  // Global batch 16 everywhere.
  const auto reference = train_params(one, data, opt + "batch_size 16\n");
  const auto world_plain = train_params(world, data, opt + "batch_size " + std::to_string(16 / p) + "\n");
  const auto world_accum = train_params(world, data,
                                        opt + "batch_size " + std::to_string(8 / p) + "\naccumulation_steps 2\n");
  EXPECT_LT(relative_difference(reference, world_plain), 1e-6);
  EXPECT_LT(relative_difference(reference, world_accum), 1e-6);
  // The runs really trained: parameters moved away from the seed initialisation.
  const auto untrained = train_params(one, data, opt + "batch_size 16\n", {"lr=0"});
  EXPECT_GT(relative_difference(reference, untrained), 1e-2);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, Equivalence, ::testing::Values("adamw", "sgd"));

TEST(Equivalence, SameRankCountIsBitwiseReproducible) {
  const Comm world;
  const std::string data = hpct::test::friedman_file(world, "repro", 203);
  const auto a = train_params(world, data, "batch_size 8\n");
  const auto b = train_params(world, data, "batch_size 8\n");
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << i;
}
