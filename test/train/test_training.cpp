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
  // The loss is the standardised label's (Note [mlp standardisation]; the label's variance is ~24):
  // predicting the mean gives ~1, the noise floor (variance 1.0) ~0.042. Stated target: below
  // 0.083, 2.0 in the label's units (measured 0.044).
  EXPECT_GT(before, 0.6);
  EXPECT_LT(s.val_loss, 0.083);
  EXPECT_LT(s.last_epoch_loss, 0.104);
  RecordProperty("val_loss", std::to_string(s.val_loss));
}
