// The recipe for a new family, proven by one that lives under test/: token_bag reads a ragged int64
// field through the hdf5_fields data source, trains end to end through the trainer at 1 and 2 ranks
// (below the mean-predicting baseline), rebuilds from its weights file, and a token outside the
// vocabulary is an error naming the file, field and row; a step over ragged batches allocates nothing.
#include <gtest/gtest.h>

#include <random>

#include "io/hdf5.hpp"
#include "models/registry.hpp"
#include "nn/weights_io.hpp"
#include "support/allocation_counter.hpp"
#include "support/test_support.hpp"
#include "token_bag/token_bag_model.hpp"
#include "train/trainer.hpp"

using namespace hpct;

namespace {

// Rows of 1..12 tokens of a 40-word vocabulary; the target is the mean of the tokens' hidden values
// plus noise 0.05: learnable exactly by a mean embedding. Returns the targets' variance (what
// predicting the mean scores).
double write_bags(const std::string& path, std::uint64_t rows, std::int64_t bad_token_row = -1) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> length(1, 12), word(0, 39);
  std::vector<double> value(40);
  for (double& v : value) v = normal(rng);
  std::vector<std::int64_t> tokens, offsets = {0};
  std::vector<float> targets;
  double sum = 0, sum2 = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    const int n = length(rng);
    double mean = 0;
    for (int k = 0; k < n; ++k) {
      const int w = word(rng);
      tokens.push_back(static_cast<std::int64_t>(r) == bad_token_row && k == 0 ? 40 : w);
      mean += value[static_cast<std::size_t>(w)] / n;
    }
    offsets.push_back(static_cast<std::int64_t>(tokens.size()));
    const double t = mean + 0.05 * normal(rng);
    targets.push_back(static_cast<float>(t));
    sum += t, sum2 += t * t;
  }
  const h5::File f = h5::File::create(path);
  std::vector<long long> tk(tokens.begin(), tokens.end()), of(offsets.begin(), offsets.end());
  h5::write(f, "tokens", {tk.size()}, tk.data());
  h5::write(f, "tokens_offsets", {of.size()}, of.data());
  h5::write(f, "targets", {rows, 1}, targets.data());
  const double m = sum / static_cast<double>(rows);
  return sum2 / static_cast<double>(rows) - m * m;
}

const char* kDeck =
    "model token_bag\ndata_format hdf5_fields\nfields tokens,targets\ntoken_bag_vocab 40\ntoken_bag_dim 8\n"
    "epochs 12\nlr 0.02\nvalidation_fraction 0.2\n";

}  // namespace

class TokenBag : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!find_model_family("token_bag")) register_model_family(hpct::test::token_bag_family());
  }
};

TEST_F(TokenBag, TrainsThroughTheTrainerAndRebuildsFromItsWeights) {
  const Comm comm;
  const std::string data = hpct::test::scratch("token_bag.h5"),
                    weights = hpct::test::scratch("token_bag_weights.h5");
  double variance = 0;
  if (comm.rank() == 0) variance = write_bags(data, 1500);
  comm.broadcast(&variance, 1, 0);
  const deck::Deck deck = hpct::test::make_deck(std::string(kDeck) + "data_file " + data + "\noutput " + weights +
                                                "\nbatch_size " + std::to_string(32 / comm.size()) + "\n");
  NetworkTrainer trainer(deck, comm);
  const TrainSummary s = trainer.run();
  EXPECT_LT(s.val_loss, 0.2 * variance) << "baseline (predict the mean) " << variance;

  // The weights file rebuilds the model: same config, same parameters, same loss on a batch.
  std::unique_ptr<Model> loaded = load_model(weights, 16);
  EXPECT_EQ(loaded->family(), "token_bag");
  EXPECT_EQ(loaded->config_string(), trainer.model().config_string());
  auto a = to_host(trainer.model().store().params()), b = to_host(loaded->store().params());
  ASSERT_EQ(a.extent(0), b.extent(0));
  for (std::size_t i = 0; i < a.extent(0); ++i) ASSERT_EQ(a(i), b(i)) << "parameter " << i;
}

TEST_F(TokenBag, ATokenOutsideTheVocabularyNamesFileFieldAndRow) {
  const Comm comm;
  const std::string data = hpct::test::scratch("token_bag_bad.h5");
  if (comm.rank() == 0) write_bags(data, 300, 123);
  comm.barrier();
  const deck::Deck deck = hpct::test::make_deck(std::string(kDeck) + "data_file " + data + "\nbatch_size 8\n",
                                                {"epochs=1"});
  EXPECT_EQ(hpct::test::error_message([&] {
              NetworkTrainer t(deck, comm);
              t.run();
            }),
            data +
                ": dataset 'tokens': row 123 holds a value outside [0, 39] (first bad row of the training split: "
                "the first 240 rows of data_file)");
}

// Ragged batches reach the model without an allocation in the step (the shard's offsets per
// micro-batch are laid out at the epoch start; Batch::offsets is an unmanaged view).
TEST_F(TokenBag, ARaggedStepAllocatesNothing) {
  const Comm comm;
  const std::string data = hpct::test::scratch("token_bag_noalloc.h5");
  if (comm.rank() == 0) write_bags(data, 1200);
  comm.barrier();
  for (const char* cache : {"memory", "stream"}) {
    const deck::Deck deck = hpct::test::make_deck(std::string(kDeck) + "data_file " + data +
                                                      "\nbatch_size 8\naccumulation_steps 2\nlog_every 100000\n"
                                                      "data_cache " +
                                                      cache + "\n",
                                                  {"epochs=1"});
    NetworkTrainer t(deck, comm);
    hpct::test::AllocationCounts counts;
    t.set_step_hook(hpct::test::count_allocations_between(5, 25, counts));
    t.run();
    EXPECT_EQ(counts.heap, 0) << cache;
    EXPECT_EQ(counts.views, 0) << cache;
  }
}
