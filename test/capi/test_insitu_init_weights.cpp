// init_weights in the in-situ library starts the model as train's run does (Note [init_weights in
// situ] in insitu/session.cpp): an mlp file's standardisation statistics are the normalisation from
// the start and stay through a session (stats_update frozen), and a file trained with other
// standardisation than the deck's logs Note [fine-tuning across standardisation]'s note.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "insitu/config.hpp"
#include "insitu/session.hpp"
#include "nn/weights_io.hpp"
#include "support/test_support.hpp"

using namespace hpct;

namespace {

const std::string kDeck =
    "model mlp\nloss mse\nhidden_sizes 4\nbatch_size 4\nlr 0.01\nseed 3\ninput_width 2\ntarget_width 1\n"
    "buffer_capacity 16\n";

// 8 samples around `offset` (inputs) and 10 * offset (label): other offsets, other statistics.
void push_samples(insitu::InsituModel& m, float offset) {
  std::vector<float> x(16), y(8);
  for (int i = 0; i < 8; ++i) {
    x[2 * i] = offset + 0.5f * static_cast<float>(i);
    x[2 * i + 1] = -offset - 0.25f * static_cast<float>(i * i);
    y[i] = 10.0f * offset + static_cast<float>(i % 3);
  }
  m.push(x.data(), y.data(), 8, insitu::Order::row_major);
}

void expect_same_stats(const DataStats& a, const DataStats& b, const char* when) {
  EXPECT_EQ(a.x_mean, b.x_mean) << when;
  EXPECT_EQ(a.x_std, b.x_std) << when;
  EXPECT_EQ(a.y_mean, b.y_mean) << when;
  EXPECT_EQ(a.y_std, b.y_std) << when;
}

}  // namespace

TEST(InsituInitWeights, AnMlpFilesStatisticsAreTheNormalisationAndAnotherStandardisationSaysSo) {
  const Comm world;
  insitu::InsituModel trained("trained", insitu::parse_insitu_deck(kDeck, "(deck text)"), world.raw());
  trained.log().set_file(test::scratch("insitu_init_trained_log.txt"), false);
  push_samples(trained, 100.0f);
  trained.train_session("t");
  const std::string file = test::scratch("insitu_init_weights.h5");
  if (world.rank() == 0)
    nn::write_weights(file, trained.model().store(),
                      {{"model", "mlp"}, {"config", trained.model().config_string()}},
                      trained.model().extra_datasets());
  world.barrier();

  insitu::InsituModel tuned("tuned",
                            insitu::parse_insitu_deck(kDeck + "init_weights " + file + "\n", "(deck text)"),
                            world.raw());
  tuned.log().set_file(test::scratch("insitu_init_tuned_log.txt"), false);
  expect_same_stats(tuned.stats(), trained.stats(), "before the first session");
  push_samples(tuned, -3.0f);  // other numbers: their statistics would differ
  tuned.train_session("t");
  expect_same_stats(tuned.stats(), trained.stats(), "after a session (stats_update frozen)");

  // A deck without standardisation fine-tuning the standardised file: the note train logs.
  Log::set_quiet(false);
  testing::internal::CaptureStdout();
  insitu::InsituModel raw("raw",
                          insitu::parse_insitu_deck(kDeck +
                                                        "standardize_inputs false\nstandardize_targets false\n"
                                                        "init_weights " +
                                                        file + "\n",
                                                    "(deck text)"),
                          world.raw());
  const std::string out = testing::internal::GetCapturedStdout();
  Log::set_quiet(std::getenv("HPCTRAIN_TEST_VERBOSE") == nullptr);
  if (world.rank() == 0) {
    EXPECT_NE(out.find("note: init_weights " + file +
                       " was trained with standardize_inputs true and standardize_targets true, this run has "
                       "standardize_inputs false and standardize_targets false"),
              std::string::npos)
        << out;
  }
}
