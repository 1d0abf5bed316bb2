// Training through the library equals `train`: samples pushed by the ranks and trained in sessions
// give BITWISE the same parameters as NetworkTrainer on an HDF5 file holding the same samples in
// the library's global order (rank 0's oldest first, then rank 1's: Note [global numbering] in
// insitu/buffer.hpp), for mlp and diffusion, one session of E epochs or E sessions of one, and a
// buffer that overwrote its oldest samples. The online (Welford/Chan) statistics agree with the
// two-pass statistics to rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "capi/hpctrain.h"
#include "core/log.hpp"
#include "insitu/config.hpp"
#include "io/hdf5.hpp"
#include "support/test_support.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

using namespace hpct;

namespace {

constexpr int kIn = 7, kOut = 16;

// Row i of the whole data set (the same on every rank).
void sample_row(std::uint64_t i, float* x, float* y) {
  for (int j = 0; j < kIn; ++j) x[j] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + j) + 0.1 * j);
  for (int j = 0; j < kOut; ++j)
    y[j] = static_cast<float>(x[j % kIn] * std::cos(0.05 * static_cast<double>(i * j)) + 2.0 + 0.3 * j);
}

std::string base_deck(const std::string& model) {
  return "model " + model +
         "\nbatch_size 8\nlr 0.01\nseed 3\nvalidation_fraction 0\nhidden_sizes 16\nactivation tanh\n"
         "diffusion_hidden 16\ntime_embedding_dim 8\ndiffusion_steps 10\n"
         "input_width 7\ntarget_width 16\n";
}

// The rows `rank` pushes: [N r / P, N (r + 1) / P) of the data set.
std::pair<std::uint64_t, std::uint64_t> local_rows(std::uint64_t n, const Comm& comm) {
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  return {n * r / p, n * (r + 1) / p};
}

// Rank 0 writes the rows each rank keeps (its newest `keep`), rank-major, as an HDF5 data file.
std::string write_file(const Comm& comm, const std::string& name, std::uint64_t n, std::uint64_t keep) {
  const std::string path = test::scratch(name + ".h5");
  if (comm.rank() == 0) {
    std::vector<float> x, y;
    std::vector<float> rx(kIn), ry(kOut);
    std::uint64_t rows = 0;
    for (int r = 0; r < comm.size(); ++r) {
      const std::uint64_t first = n * r / comm.size(), last = n * (r + 1) / comm.size();
      for (std::uint64_t i = last - std::min(keep, last - first); i < last; ++i, ++rows) {
        sample_row(i, rx.data(), ry.data());
        x.insert(x.end(), rx.begin(), rx.end());
        y.insert(y.end(), ry.begin(), ry.end());
      }
    }
    const h5::File f = h5::File::create(path);
    h5::write(f, "inputs", {rows, static_cast<std::uint64_t>(kIn)}, x.data());
    h5::write(f, "targets", {rows, static_cast<std::uint64_t>(kOut)}, y.data());
  }
  comm.barrier();
  return path;
}

std::vector<float> params_of(const View1<float>& v) {
  auto h = to_host(v);
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

std::vector<float> train_on_file(const Comm& comm, const std::string& deck_text, bool ema = false) {
  const deck::Deck deck = deck::Deck::parse(deck_text, "test.in", insitu::insitu_schema());
  NetworkTrainer t(deck, comm);
  t.run();
  return ema ? t.step_runner().ema_values(true) : params_of(t.model().store().params());
}

// Pushes this rank's rows in two calls, runs `sessions` sessions, returns the parameters (read
// back from a checkpoint the library writes).
// `dataset`: the checkpoint's dataset returned; `at_end(handle)` runs before the handle is destroyed.
std::vector<float> train_in_situ(const Comm& comm, const std::string& deck_text, std::uint64_t n, int sessions,
                                 const std::string& name, const std::string& dataset = "params",
                                 const std::function<void(int)>& at_end = {}) {
  int h = 0;
  EXPECT_EQ(hpctrain_create_from_text(name.c_str(), deck_text.c_str(), comm.raw(), -1, &h), HPCTRAIN_OK)
      << hpctrain_last_error();
  EXPECT_EQ(hpctrain_set_log_file(h, test::scratch("insitu_log.txt").c_str(), 0), HPCTRAIN_OK);
  const auto [first, last] = local_rows(n, comm);
  std::vector<float> x, y, rx(kIn), ry(kOut);
  for (std::uint64_t i = first; i < last; ++i) {
    sample_row(i, rx.data(), ry.data());
    x.insert(x.end(), rx.begin(), rx.end());
    y.insert(y.end(), ry.begin(), ry.end());
  }
  const std::uint64_t rows = last - first, half = rows / 2;
  EXPECT_EQ(hpctrain_push_float(h, x.data(), static_cast<int64_t>(half), kIn, y.data(), kOut, HPCTRAIN_ROW_MAJOR),
            HPCTRAIN_OK);
  EXPECT_EQ(hpctrain_push_float(h, x.data() + half * kIn, static_cast<int64_t>(rows - half), kIn,
                                y.data() + half * kOut, kOut, HPCTRAIN_ROW_MAJOR),
            HPCTRAIN_OK);
  for (int s = 0; s < sessions; ++s)
    EXPECT_EQ(hpctrain_train(h, "t", nullptr), HPCTRAIN_OK) << hpctrain_last_error();
  const std::string dir = test::scratch("insitu_ckpt_" + name);
  EXPECT_EQ(hpctrain_save_checkpoint(h, dir.c_str(), nullptr, nullptr), HPCTRAIN_OK) << hpctrain_last_error();
  if (at_end) at_end(h);
  EXPECT_EQ(hpctrain_destroy(h), HPCTRAIN_OK);
  std::vector<std::string> files = checkpoint_candidates(dir);
  EXPECT_FALSE(files.empty());
  const h5::File f = h5::File::open_read(files.front());
  return h5::read_all<float>(f, dataset);
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class InsituEquivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(InsituEquivalence, OneSessionOfTwoEpochsIsTrainOnTheFile) {
  const Comm world;
  const std::string model = GetParam();
  const std::uint64_t n = 203;  // the last step of each epoch is partial
  const std::string data = write_file(world, "eq_" + model, n, n);
  const std::string deck = base_deck(model) + "stats_source buffer\nbuffer_capacity 1000\n";
  const auto file = train_on_file(world, deck + "data_file " + data + "\nepochs 2\n");
  const auto insitu = train_in_situ(world, deck + "session_epochs 2\n", n, 1, "one_" + model);
  EXPECT_TRUE(bitwise_equal(file, insitu)) << "relative difference " << test::relative_difference(file, insitu);
  // Two sessions of one epoch continue the epoch index: the same again.
  const auto two = train_in_situ(world, deck + "session_epochs 1\n", n, 2, "two_" + model);
  EXPECT_TRUE(bitwise_equal(file, two)) << "relative difference " << test::relative_difference(file, two);
  // The comparison can fail: one epoch less differs.
  const auto short_run = train_in_situ(world, deck + "session_epochs 1\n", n, 1, "short_" + model);
  EXPECT_FALSE(bitwise_equal(file, short_run));
}

TEST_P(InsituEquivalence, AnOverwrittenBufferIsTrainOnItsNewestSamples) {
  const Comm world;
  const std::string model = GetParam();
  const std::uint64_t n = 150, keep = 50;  // every rank pushes more than it keeps
  const std::string data = write_file(world, "ring_" + model, n, keep);
  const std::string deck = base_deck(model) + "stats_source buffer\nbuffer_capacity 50\n";
  const auto file = train_on_file(world, deck + "data_file " + data + "\nepochs 1\n");
  const auto insitu = train_in_situ(world, deck, n, 1, "ring_" + model);
  EXPECT_TRUE(bitwise_equal(file, insitu)) << "relative difference " << test::relative_difference(file, insitu);
}

INSTANTIATE_TEST_SUITE_P(Families, InsituEquivalence, ::testing::Values("mlp", "diffusion"));

// ema_decay (issue 39): the library's checkpoint holds the EMA `train` keeps over the same samples,
// bitwise; predictions come from it (predict_weights ema), and the trained weights stay in place
// for training (a raw prediction after an EMA one is the raw one before it).
TEST(InsituEma, TheCheckpointHoldsTrainsEmaAndPredictionsUseIt) {
  const Comm world;
  const std::uint64_t n = 203;
  const std::string data = write_file(world, "ema_mlp", n, n);
  const std::string deck = base_deck("mlp") + "stats_source buffer\nbuffer_capacity 1000\nema_decay 0.9\n";
  const auto file = train_on_file(world, deck + "data_file " + data + "\nepochs 2\n", true);
  std::vector<float> x(kIn * 5), y(kOut * 5);
  for (std::uint64_t i = 0; i < 5; ++i) sample_row(i, x.data() + i * kIn, y.data() + i * kOut);
  auto predictions = [&](int h) {
    std::vector<float> out(kOut * 5);
    EXPECT_EQ(hpctrain_predict_float(h, x.data(), 5, kIn, out.data(), kOut, HPCTRAIN_ROW_MAJOR), HPCTRAIN_OK)
        << hpctrain_last_error();
    return out;
  };
  std::vector<float> ema_pred, raw_pred;
  const auto insitu = train_in_situ(world, deck + "session_epochs 2\n", n, 1, "ema_mlp", "ema/params",
                                    [&](int h) { ema_pred = predictions(h); });
  EXPECT_TRUE(bitwise_equal(file, insitu)) << "relative difference " << test::relative_difference(file, insitu);
  train_in_situ(world, deck + "session_epochs 2\npredict_weights raw\n", n, 1, "ema_mlp_raw", "params",
                [&](int h) { raw_pred = predictions(h); });
  EXPECT_FALSE(bitwise_equal(ema_pred, raw_pred));
  // The trained weights continue training after an EMA prediction: 2 sessions with a prediction
  // between them train what 2 sessions without one do.
  const auto two = train_in_situ(world, deck + "session_epochs 2\n", n, 2, "ema_mlp_two");
  const auto two_predicted = train_in_situ(
      world, deck + "session_epochs 2\n", n, 1, "ema_mlp_pred", "params", [&](int h) {
        predictions(h);
        EXPECT_EQ(hpctrain_train(h, "t", nullptr), HPCTRAIN_OK);
        EXPECT_EQ(hpctrain_save_checkpoint(h, test::scratch("insitu_ckpt_ema_mlp_pred").c_str(), nullptr, nullptr),
                  HPCTRAIN_OK);
      });
  EXPECT_TRUE(bitwise_equal(two, two_predicted));
}

TEST(InsituStats, OnlineStatisticsAgreeWithTwoPassToRounding) {
  const Comm world;
  const std::uint64_t n = 203;
  const std::string data = write_file(world, "stats", n, n);
  const std::string deck = base_deck("diffusion") + "buffer_capacity 1000\n";
  // Pushed (online) statistics: the trained weights differ from train's only through the last
  // bits of the normalisation.
  const auto file = train_on_file(world, deck + "data_file " + data + "\nepochs 1\nstats_source buffer\n");
  const auto online = train_in_situ(world, deck + "stats_source pushed\n", n, 1, "online");
  EXPECT_LT(test::relative_difference(file, online), 1e-5);

  int h = 0;
  ASSERT_EQ(hpctrain_create_from_text("s", (deck + "stats_source pushed\n").c_str(), world.raw(), -1, &h),
            HPCTRAIN_OK);
  ASSERT_EQ(hpctrain_set_log_file(h, test::scratch("insitu_log.txt").c_str(), 0), HPCTRAIN_OK);
  const auto [first, last] = local_rows(n, world);
  std::vector<float> rx(kIn), ry(kOut);
  for (std::uint64_t i = first; i < last; ++i) {
    sample_row(i, rx.data(), ry.data());
    ASSERT_EQ(hpctrain_push_float(h, rx.data(), 1, kIn, ry.data(), kOut, HPCTRAIN_ROW_MAJOR), HPCTRAIN_OK);
  }
  ASSERT_EQ(hpctrain_train(h, "t", nullptr), HPCTRAIN_OK);
  std::vector<double> xm(kIn), xs(kIn), ym(kOut), ys(kOut);
  int64_t count = 0;
  ASSERT_EQ(hpctrain_stats(h, xm.data(), xs.data(), ym.data(), ys.data(), &count), HPCTRAIN_OK);
  EXPECT_EQ(count, static_cast<int64_t>(n));
  // The two-pass reference over all rows.
  for (int j = 0; j < kOut; ++j) {
    double sum = 0, sq = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      sample_row(i, rx.data(), ry.data());
      sum += ry[static_cast<std::size_t>(j)];
    }
    const double mean = sum / static_cast<double>(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      sample_row(i, rx.data(), ry.data());
      sq += (ry[static_cast<std::size_t>(j)] - mean) * (ry[static_cast<std::size_t>(j)] - mean);
    }
    EXPECT_NEAR(ym[static_cast<std::size_t>(j)], mean, 1e-12 * std::abs(mean) + 1e-14);
    EXPECT_NEAR(ys[static_cast<std::size_t>(j)], std::sqrt(sq / static_cast<double>(n)), 1e-12);
  }
  EXPECT_EQ(hpctrain_destroy(h), HPCTRAIN_OK);
}

}  // namespace
