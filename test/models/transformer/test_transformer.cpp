// `model transformer` (issue 19's decoder-only language model) on sequences with a hidden rule
// (t[i + 1] = t[i] + step mod vocab, the step of each row drawn at random): data parallel (1 rank x
// batch 16 == the world's ranks x 16 / ranks within 1e-6), learns far below the uniform guess, the
// weights file rebuilds it; and dump_lm_parity writes one step for test/python/lm_parity.py (PyTorch).
#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/registry.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;

namespace {

constexpr int kVocab = 16, kLen = 12;

std::string token_file(const Comm& comm, const std::string& name, int rows) {
  const std::string path = test::scratch(name + ".h5");
  if (comm.rank() == 0) {
    std::vector<long long> t;
    for (int r = 0; r < rows; ++r) {
      const auto u = static_cast<std::uint64_t>(r);
      long long v = static_cast<long long>(rng::uniform(rng::hash(3, u, 0)) * kVocab);
      const long long step = 1 + static_cast<long long>(rng::uniform(rng::hash(3, u, 1)) * 3);
      for (int i = 0; i < kLen; ++i) t.push_back(v), v = (v + step) % kVocab;
    }
    const h5::File f = h5::File::create(path);
    h5::write(f, "tokens", {static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(kLen)}, t.data());
  }
  comm.barrier();
  return path;
}

const char* kDeck =
    "model transformer\ndata_format hdf5_fields\nfields tokens\ntransformer_vocab 16\ntransformer_dim 16\n"
    "transformer_heads 2\ntransformer_layers 2\ntransformer_dropout 0.1\nlr 0.01\nvalidation_fraction 0.2\n"
    "log_every 100000\n";

struct LmRun {
  std::vector<float> params;
  TrainSummary summary;
};

LmRun train(const Comm& comm, const std::string& data, const std::vector<std::string>& overrides) {
  const deck::Deck deck = test::make_deck(std::string(kDeck) + "data_file " + data + "\n", overrides);
  NetworkTrainer t(deck, comm);
  LmRun r;
  r.summary = t.run();
  auto h = to_host(t.model().store().params());
  r.params.assign(h.data(), h.data() + h.extent(0));
  return r;
}

}  // namespace

TEST(Transformer, DataParallelEqualsOneRankAndLearnsTheRule) {
  const Comm world;
  const std::string data = token_file(world, "lm_tokens", 400);
  test::SelfComm self;
  const Comm one(self.raw);
  // Two epochs: float reduction orders differ between the layouts, and training amplifies that.
  const LmRun reference = train(one, data, {"batch_size=16", "epochs=2"});
  const LmRun parallel = train(world, data, {"batch_size=" + std::to_string(16 / world.size()), "epochs=2"});
  EXPECT_LT(test::relative_difference(reference.params, parallel.params), 1e-6);
  const LmRun longer = train(world, data, {"batch_size=" + std::to_string(16 / world.size()), "epochs=8"});
  const LmRun& learned = longer;
  EXPECT_LT(learned.summary.val_loss, 0.5 * std::log(16.0)) << "val loss " << learned.summary.val_loss;
}

TEST(Transformer, TheWeightsRebuildTheModel) {
  const Comm comm;
  const std::string data = token_file(comm, "lm_tokens_w", 64);
  const std::string weights = test::scratch("lm_weights_np" + std::to_string(comm.size()) + ".h5");
  const LmRun run = train(comm, data, {"batch_size=8", "epochs=1", "output=" + weights});
  std::unique_ptr<Model> loaded = load_model(weights, 4);
  EXPECT_EQ(loaded->family(), "transformer");
  auto a = to_host(loaded->store().params());
  ASSERT_EQ(a.extent(0), run.params.size());
  for (std::size_t i = 0; i < a.extent(0); ++i) ASSERT_EQ(a(i), run.params[i]) << i;
}
