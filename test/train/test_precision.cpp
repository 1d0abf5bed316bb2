// Mixed precision in training: fp16's dynamic loss scaler on an overflow provoked by a huge initial
// scale (skip, back off, grow; the same decision on every rank; resume keeps the scale, bitwise),
// and bf16/fp16 training reaching the fp32 loss within a stated tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;

namespace {

std::vector<float> params_of(NetworkTrainer& t) {
  auto h = to_host(t.model().store().params());
  return std::vector<float>(h.data(), h.data() + t.model().store().count());
}

std::string base_deck(const std::string& data, const Comm& comm, int epochs = 1) {
  return "data_file " + data + "\nhidden_sizes 32,32\nbatch_size " + std::to_string(16 / comm.size()) +
         "\nepochs " + std::to_string(epochs) + "\nlr 3e-3\nlog_every 1000000\n";
}

}  // namespace

TEST(Precision, Fp16ScalerSkipsOverflowBacksOffAndGrowsTheSameOnEveryRank) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "precision_data", 2000);
  // 2^40 makes the scaled output gradient overflow fp16 (65504): the first steps must be skipped.
  const deck::Deck deck = hpct::test::make_deck(base_deck(data, comm) +
                                                "precision fp16\nloss_scale_init 1099511627776\n"
                                                "loss_scale_growth_interval 10\n");
  NetworkTrainer t(deck, comm);
  std::vector<double> scales = {t.step_runner().scaler().scale()};
  std::vector<bool> skipped;
  std::vector<float> before = params_of(t);
  t.set_step_hook([&](std::uint64_t) {
    const std::vector<float> after = params_of(t);
    skipped.push_back(after == before);
    before = after;
    scales.push_back(t.step_runner().scaler().scale());
  });
  const double val_before = t.validation_loss();
  const TrainSummary s = t.run();

  ASSERT_EQ(skipped.size(), s.steps);
  std::uint64_t n_skipped = 0, clean_run = 0, growths = 0;
  for (std::size_t i = 0; i < skipped.size(); ++i) {
    if (skipped[i]) {
      ++n_skipped;
      clean_run = 0;
      EXPECT_EQ(scales[i + 1], scales[i] / 2) << "a skipped step halves the scale (step " << i + 1 << ")";
    } else if (++clean_run == 10) {
      clean_run = 0;
      ++growths;
      EXPECT_EQ(scales[i + 1], scales[i] * 2) << "10 clean steps double the scale (step " << i + 1 << ")";
    } else {
      EXPECT_EQ(scales[i + 1], scales[i]) << "step " << i + 1;
    }
  }
  EXPECT_TRUE(skipped[0]) << "2^40 must overflow fp16 at the first step";
  EXPECT_GE(n_skipped, 10u);
  EXPECT_GE(growths, 1u);
  EXPECT_EQ(s.skipped_steps, n_skipped);
  // Every rank skipped exactly the same steps (the decision uses the reduced gradients).
  EXPECT_EQ(comm.min(static_cast<long long>(n_skipped)), comm.max(static_cast<long long>(n_skipped)));
  EXPECT_LT(s.val_loss, 0.5 * val_before) << "training must still progress";
}

TEST(Precision, Fp16ResumeRestoresTheLossScaleBitwise) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "precision_data", 2000);
  const std::string dir = hpct::test::scratch("precision_ckpt_np" + std::to_string(comm.size()));
  if (comm.rank() == 0) std::system(("rm -rf " + dir).c_str());
  comm.barrier();
  const std::string text = base_deck(data, comm, 2) +
                           "precision fp16\nloss_scale_init 1099511627776\n"
                           "loss_scale_growth_interval 10\n";
  std::vector<float> full;
  {
    NetworkTrainer t(hpct::test::make_deck(text + "checkpoint_dir " + dir +
                                           "\ncheckpoint_every_steps 70\n"
                                           "checkpoint_keep 100\n"),
                     comm);
    t.run();
    full = params_of(t);
  }
  // Step 70 lies after the initial back-off and inside the first epoch.
  NetworkTrainer resumed(hpct::test::make_deck(text + "checkpoint_dir " + dir + "\nresume " + dir +
                                               "/ckpt-000000070.h5\n"),
                         comm);
  EXPECT_NE(resumed.step_runner().scaler().scale(), 1099511627776.0) << "the scale comes from the checkpoint";
  resumed.run();
  EXPECT_EQ(params_of(resumed), full);
}

TEST(Precision, Bf16AndFp16ReachTheFp32LossWithinTenPercent) {
  const Comm comm;
  const std::string data = hpct::test::friedman_file(comm, "precision_long", 6000, 3);
  auto train = [&](const std::string& precision) {
    NetworkTrainer t(hpct::test::make_deck("data_file " + data +
                                           "\nhidden_sizes 64,64\nactivation gelu\n"
                                           "batch_size " +
                                           std::to_string(32 / comm.size()) +
                                           "\nepochs 6\nlr 5e-3\nlr_schedule cosine\nlog_every 1000000\n"
                                           "precision " +
                                           precision + "\n"),
                     comm);
    return t.run().val_loss;
  };
  const double fp32 = train("fp32"), bf16 = train("bf16"), fp16 = train("fp16");
  RecordProperty("val_fp32", std::to_string(fp32));
  RecordProperty("val_bf16", std::to_string(bf16));
  RecordProperty("val_fp16", std::to_string(fp16));
  // Stated tolerance: within 10% of the fp32 validation loss (noise floor 1.0, fp32 reaches ~1.3).
  EXPECT_LT(std::fabs(bf16 - fp32), 0.10 * fp32) << "bf16 " << bf16 << " vs fp32 " << fp32;
  EXPECT_LT(std::fabs(fp16 - fp32), 0.10 * fp32) << "fp16 " << fp16 << " vs fp32 " << fp32;
  EXPECT_NE(bf16, fp32) << "bf16 must actually round";
}
