// A session stages on each rank only its shard of the session (Note [staged shard] in
// insitu/session_rows.hpp): with unequal pushes per rank, the rows a rank holds during a session
// are its epoch's shard or its statistics block (about N / P), never all N samples, and it still
// trains bitwise like `train` on an HDF5 file of every rank's samples in rank-major order.
// And the deck keys that need a validation loss (early stopping, lr_schedule plateau) are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "data/epoch_order.hpp"
#include "insitu/config.hpp"
#include "insitu/session.hpp"
#include "io/hdf5.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;

namespace {

constexpr int kIn = 5, kOut = 12, kBatch = 8;

// Rank r pushes the global rows [first_row(r), first_row(r + 1)): 60 on rank 0, 17 on rank 1, ...
std::uint64_t pushed_by(int rank) { return rank == 0 ? 60 : 17; }
std::uint64_t first_row(int rank) {
  std::uint64_t first = 0;
  for (int r = 0; r < rank; ++r) first += pushed_by(r);
  return first;
}

void sample_row(std::uint64_t i, float* x, float* y) {
  for (int j = 0; j < kIn; ++j) x[j] = static_cast<float>(std::cos(0.29 * static_cast<double>(i) + j) - 0.2 * j);
  for (int j = 0; j < kOut; ++j)
    y[j] = static_cast<float>(x[j % kIn] * std::sin(0.07 * static_cast<double>(i + j)) + 1.5);
}

std::string deck_text() {
  return "model diffusion\nbatch_size " + std::to_string(kBatch) +
         "\nlr 0.01\nseed 11\nvalidation_fraction 0\ndiffusion_hidden 16\ntime_embedding_dim 8\n"
         "diffusion_steps 10\ninput_width 5\ntarget_width 12\nstats_source buffer\nbuffer_capacity 100\n"
         "session_epochs 2\n";
}

std::vector<float> params_of(const View1<float>& v) {
  auto h = to_host(v);
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

TEST(InsituShard, ASessionHoldsOnlyThisRanksShardAndStillTrainsLikeTrain) {
  const Comm world;
  const std::uint64_t total = first_row(world.size());
  // The same samples, rank-major, as a file. Note [trainer first]: `train` runs before the in-situ
  // model is created, as in test_insitu_equivalence; created after one, it differed in the last
  // bits (some process-wide state outside the in-situ library; see the report of this change).
  const std::string path = test::scratch("insitu_shard.h5");
  if (world.rank() == 0) {
    std::vector<float> xs(total * kIn), ys(total * kOut);
    for (std::uint64_t i = 0; i < total; ++i) sample_row(i, &xs[i * kIn], &ys[i * kOut]);
    const h5::File f = h5::File::create(path);
    h5::write(f, "inputs", {total, static_cast<std::uint64_t>(kIn)}, xs.data());
    h5::write(f, "targets", {total, static_cast<std::uint64_t>(kOut)}, ys.data());
  }
  world.barrier();
  const deck::Deck file_deck = deck::Deck::parse(deck_text() + "data_file " + path + "\nepochs 2\n", "test.in",
                                                 insitu::insitu_schema());
  NetworkTrainer t(file_deck, world);
  t.run();
  insitu::InsituModel m("shard", insitu::parse_insitu_deck(deck_text(), "(deck text)"), world.raw());
  m.log().set_file(test::scratch("insitu_shard_log.txt"), false);
  std::vector<float> x(kIn), y(kOut);
  for (std::uint64_t i = first_row(world.rank()); i < first_row(world.rank() + 1); ++i) {
    sample_row(i, x.data(), y.data());
    m.push(x.data(), y.data(), 1, insitu::Order::row_major);
  }
  m.train_session("t");

  // The most this rank may hold: its rows of an epoch, or its block of the buffer statistics.
  const EpochOrder sampler(total, kBatch, world.size(), 1, 11, true);
  const auto r = static_cast<std::uint64_t>(world.rank()), p = static_cast<std::uint64_t>(world.size());
  const std::uint64_t shard = std::max(sampler.rows_per_epoch(world.rank()), total * (r + 1) / p - total * r / p);
  EXPECT_EQ(m.last_session_staged_rows(), shard);
  if (world.size() > 1) {
    EXPECT_LT(m.last_session_staged_rows(), total) << "a rank staged the whole session";
    if (world.rank() == 1) {
      EXPECT_GT(m.last_session_staged_rows(), pushed_by(1)) << "rank 1 trains on rank 0's rows too";
    }
  }

  const auto file = params_of(t.model().store().params()), insitu = params_of(m.model().store().params());
  ASSERT_EQ(file.size(), insitu.size());  // `train` reaches the same bits
  EXPECT_EQ(std::memcmp(file.data(), insitu.data(), file.size() * sizeof(float)), 0)
      << "relative difference " << test::relative_difference(file, insitu);
}

}  // namespace

// Sessions compute no validation loss: the rules that watch one are refused at their deck line.
TEST(InsituShard, RefusesTheValidationLossRules) {
  for (const std::string& line : {std::string("lr_schedule plateau"), std::string("early_stopping_patience 2")}) {
    std::string msg;
    try {
      insitu::InsituConfig::from_deck(insitu::parse_insitu_deck(deck_text() + line + "\n", "session.in"));
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_EQ(msg.rfind("session.in:14: " + line.substr(0, line.find(' ')) + ": ", 0), 0u) << msg;
  }
}
