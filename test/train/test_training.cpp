// End-to-end: a short data-parallel run on generated Friedman #1 data reaches a stated loss.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;

TEST(Training, FriedmanMlpReachesStatedValidationLoss) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "friedman_train", 12000, 3);
  const deck::Deck deck = hpct::test::make_deck("data_file " + data +
                                                "\nhidden_sizes 64,64\nactivation gelu\nbatch_size " +
                                                std::to_string(32 / comm.size()) +
                                                "\nepochs 10\nlr 5e-3\nlr_schedule cosine\nwarmup_steps 20\n");
  NetworkTrainer t(deck, comm);
  const double before = t.validation_loss();
  const TrainSummary s = t.run();
  // Predicting the mean gives MSE ~24; the noise floor is 1.0. Stated target: below 2.0 (measured 1.23).
  EXPECT_GT(before, 15.0);
  EXPECT_LT(s.val_loss, 2.0);
  EXPECT_LT(s.last_epoch_loss, 2.5);
  RecordProperty("val_loss", std::to_string(s.val_loss));
}
