// Each agent type's own motion tokens (motion_vocab_per_type, Note [tokens per type]): bad values are
// deck errors naming the key; the ids past a type's count are never sampled in a rollout (boosting
// their logits changes nothing, while it does without the counts); training with counts (and a
// fitted vocabulary) is data parallel and resumes bitwise; the weights file rebuilds the counts; a
// fine-tuning run keeps the fitted vocabulary of its init_weights.
// The loss over a type's own tokens is checked against PyTorch by parity_smart_torch_types.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.hpp"
#include "models/registry.hpp"
#include "models/smart/rollout.hpp"
#include "models/smart/smart_model.hpp"
#include "smart_tiny.hpp"

using namespace hpct;
namespace fs = std::filesystem;
using test::train;
using test::TrainRun;

namespace {

// Every type fewer tokens than the logits' 64: ids 24 to 63 are no type's.
const char* const kPerType = "motion_vocab_per_type=vehicle:24,pedestrian:16,cyclist:24";

// The rollout scores of a weights file as a CSV, with `boost` added to the head's bias for the
// token ids from `from` on.
std::string rollout_csv(const std::string& weights, const std::string& scenes, float boost, int from = 24) {
  smart::RolloutOptions o;
  o.rollouts = 2, o.scenes_per_batch = 2, o.max_scenes = 4;
  std::unique_ptr<Model> model = load_model(weights, o.rollouts * o.scenes_per_batch);
  int found = 0;
  for (const auto& t : model->store().tensors()) {
    if (t.name != "head.2/bias") continue;
    auto h = to_host(model->store().params());
    for (auto k = static_cast<std::uint64_t>(from); k < t.size; ++k) h(t.offset + k) += boost;
    Kokkos::deep_copy(model->store().params(), h);
    ++found;
  }
  EXPECT_EQ(found, 1);
  smart::RolloutReport r = smart::evaluate_rollouts(*model, scenes, o);
  r.finish();
  return r.csv();
}

}  // namespace

TEST(SmartTypes, BadCountsAreDeckErrorsNamingTheKey) {
  for (const char* bad :
       {"bicycle:16", "pedestrian:4", "pedestrian:65", "pedestrian:16,pedestrian:20", "pedestrian", "cyclist:1x"}) {
    try {
      model_from_config("smart", std::string("motion_vocab=64 motion_vocab_per_type=") + bad, 4, "w.h5");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input) << bad;
      EXPECT_NE(std::string(e.what()).find("motion_vocab_per_type"), std::string::npos) << e.what();
    }
  }
  // A type not named keeps motion_vocab; the stored configuration names the counts.
  std::unique_ptr<Model> m = model_from_config("smart", "motion_vocab=64 motion_vocab_per_type=cyclist:24", 4, "w");
  const auto& s = dynamic_cast<const smart::SmartModel&>(*m);
  EXPECT_EQ(s.vocab().counts(), (std::array<int, 3>{64, 64, 24}));
  EXPECT_NE(m->config_string().find("motion_vocab_per_type=cyclist:24"), std::string::npos);
  EXPECT_NE(
      model_from_config("smart", "motion_vocab=64", 4, "w")->config_string().find("motion_vocab_per_type=all"),
      std::string::npos);
}

// The data-parallel fixture of test_smart (smart_tiny.hpp).
class SmartTypesRanks : public test::SmartRanks {};

TEST_F(SmartTypesRanks, TrainDataParallelResumeBitwiseAndRebuild) {
  // Enough vehicle motions for some fitted tokens (Note [tokens a type can learn]).
  const std::string data = test::smart_scenes_file(world, "smart_types", 48, 0.5);
  const std::string dir = test::scratch("smart_types_np" + std::to_string(p));
  if (world.rank() == 0) fs::remove_all(dir), fs::create_directories(dir);
  world.barrier();
  const std::vector<std::string> common{"epochs=2", test::kSmartMaskedFields, "motion_vocab_fit=kdisks", kPerType};
  auto with = [&](std::vector<std::string> v, int batch) {
    v.insert(v.end(), common.begin(), common.end());
    v.push_back("batch_size=" + std::to_string(batch));
    return v;
  };
  const TrainRun reference = train(one, data, with({}, 16));
  const std::string weights = dir + "/weights.h5";
  const TrainRun parallel = train(world, data,
                                  with({"checkpoint_dir=" + dir, "checkpoint_every_steps=1", "checkpoint_keep=100",
                                        "output=" + weights},
                                       16 / p));
  EXPECT_EQ(parallel.vocab, reference.vocab);
  EXPECT_LT(test::relative_difference(reference.params, parallel.params), 1e-6);
  const TrainRun resumed = train(world, data, with({"resume=" + dir + "/ckpt-000000001.h5"}, 16 / p));
  ASSERT_EQ(resumed.params, parallel.params);
  // Without the counts the run differs: they reach the loss.
  const TrainRun plain = train(one, data, {"batch_size=16", "epochs=2", test::kSmartMaskedFields});
  EXPECT_GT(test::relative_difference(reference.params, plain.params), 1e-3);
  std::unique_ptr<Model> loaded = load_model(weights, 4);
  const auto& model = dynamic_cast<const smart::SmartModel&>(*loaded);
  EXPECT_EQ(model.vocab().counts(), (std::array<int, 3>{24, 16, 24}));
  EXPECT_EQ(model.vocab().table(), parallel.vocab);
  EXPECT_GT(model.vocab().centres(0), 0);  // fitted vehicles, masked past their centres
  EXPECT_LT(model.vocab().tokens(0), 24);
  // Rollouts never sample ids past a type's count, however likely the model makes them; without
  // the counts the same boost changes the rollouts.
  if (world.rank() == 0) {
    const std::string plain_weights = dir + "/plain.h5";
    train(one, data, {"batch_size=16", "epochs=1", test::kSmartMaskedFields, "output=" + plain_weights});
    EXPECT_EQ(rollout_csv(weights, data, 1e3f), rollout_csv(weights, data, 0));
    EXPECT_NE(rollout_csv(plain_weights, data, 1e3f), rollout_csv(plain_weights, data, 0));
  }
  world.barrier();
}

// Note [fine-tuning keeps the tokens]: a run from init_weights takes that file's fitted vocabulary
// instead of fitting one to its own data (which would give the head's ids other motions); from a
// grid model's file it fits, as a run from scratch does.
TEST_F(SmartTypesRanks, FineTuningKeepsTheVocabularyOfItsInitWeights) {
  const std::string first = test::smart_scenes_file(world, "smart_finetune_a", 48, 0.5);
  const std::string other = test::smart_scenes_file(world, "smart_finetune_b", 40);
  const std::string dir = test::scratch("smart_finetune_np" + std::to_string(p));
  if (world.rank() == 0) fs::remove_all(dir), fs::create_directories(dir);
  world.barrier();
  const std::vector<std::string> fitted{"epochs=1", "batch_size=" + std::to_string(16 / p),
                                        "motion_vocab_fit=kdisks"};
  auto with = [&](std::vector<std::string> v) {
    v.insert(v.end(), fitted.begin(), fitted.end());
    return v;
  };
  const TrainRun pretrained = train(world, first, with({"output=" + dir + "/pretrained.h5"}));
  const TrainRun tuned = train(world, other, with({"init_weights=" + dir + "/pretrained.h5"}));
  const TrainRun fresh = train(world, other, with({}));
  EXPECT_EQ(tuned.vocab, pretrained.vocab);
  EXPECT_NE(fresh.vocab, pretrained.vocab);  // the other data fits other tokens
  train(world, first, {"epochs=1", "batch_size=" + std::to_string(16 / p), "output=" + dir + "/grid.h5"});
  const TrainRun from_grid = train(world, other, with({"init_weights=" + dir + "/grid.h5"}));
  EXPECT_EQ(from_grid.vocab, fresh.vocab);
}
