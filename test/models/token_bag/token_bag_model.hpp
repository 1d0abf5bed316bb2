// `model token_bag`, a family that lives under test/ to prove the recipe for new families: one
// folder plus one registry line (register_model_family). Each row holds a ragged list of int64
// token ids ("tokens") and a float target; the model embeds the tokens, averages each row's
// embeddings (Note [ragged fields] in data/field.hpp) and maps the mean to the target with a Linear.
#pragma once

#include <string>

#include "models/model.hpp"
#include "models/registry.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/layers/linear.hpp"
#include "nn/loss.hpp"
#include "nn/workspace.hpp"

namespace hpct::test {

struct TokenBagConfig {
  int vocab = 0, dim = 0, max_tokens = 0;  // max_tokens: the most tokens one row holds
};

class TokenBagModel : public Model {
 public:
  TokenBagModel(const TokenBagConfig& config, int capacity);
  std::string family() const override { return "token_bag"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return store_; }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  void constrain_fields(std::vector<FieldSpec>& fields) const override;
  const TokenBagConfig& config() const { return config_; }

 private:
  // Embeds the batch's tokens and pools them: the head's output is the prediction.
  const Tensor<float>& forward(const Batch& b);

  TokenBagConfig config_;
  nn::ParameterStore<float> store_;
  nn::Workspace<float> ws_;
  nn::Embedding<float> embed_;
  nn::Linear<float> head_;
  nn::Loss<float> loss_{nn::LossKind::mse};
  Tensor<float>*ids_, *pooled_, *dpooled_, *dembedded_, *dy_;
};

// The registry entry (deck keys token_bag_vocab, token_bag_dim).
ModelFamily token_bag_family();

}  // namespace hpct::test
