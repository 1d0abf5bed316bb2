// `model transformer`: a small decoder-only language model over int64 token sequences (issue 19's
// second user of the causal attention). Each row is a sequence `tokens` [L]; positions 0..L-2 predict
// the next token: token + position embeddings, `transformer_layers` pre-norm blocks (LayerNorm,
// CausalAttention, residual; LayerNorm, Linear 4x ReLU, dropout, Linear, residual), a final
// LayerNorm and a Linear to the vocabulary; cross-entropy, a sequence's loss the mean over its positions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "models/registry.hpp"
#include "nn/layers/causal_attention.hpp"
#include "nn/layers/dropout.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/linear.hpp"
#include "nn/loss.hpp"

namespace hpct::lm {

struct TransformerConfig {
  int vocab = 256, dim = 64, heads = 4, layers = 2, seq_len = 0;  // seq_len: L of the data (L - 1 positions)
  double dropout = 0.1;
  std::uint64_t seed = 0;
};

class TransformerModel : public Model {
 public:
  TransformerModel(const TransformerConfig& config, int capacity);
  std::string family() const override { return "transformer"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return store_; }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  void constrain_fields(std::vector<FieldSpec>& fields) const override;
  bool classifies() const override { return false; }

  // ids (float) of the batch's inputs and targets; x = tok + pos embeddings; y = a + b. Public only
  // because nvcc allows no device lambda in a private member function.
  void prepare(const Batch& b);
  static void add(const Tensor<float>& a, const Tensor<float>& b, const Tensor<float>& y, int rows,
                  bool accumulate);

 private:
  struct Block {
    std::unique_ptr<nn::LayerNorm<float>> ln1, ln2;
    std::unique_ptr<nn::CausalAttention<float>> attn;
    std::unique_ptr<nn::Linear<float>> ff1, ff2;
    std::unique_ptr<nn::Dropout<float>> drop;
    Tensor<float>*h = nullptr, *y = nullptr;
  };
  const Tensor<float>& forward(const Batch& b, bool training);
  TransformerConfig config_;
  int positions_, capacity_;
  nn::ParameterStore<float> store_;
  nn::Workspace<float> ws_;
  std::unique_ptr<nn::Embedding<float>> tok_, pos_;
  std::vector<Block> blocks_;
  std::unique_ptr<nn::LayerNorm<float>> ln_f_;
  std::unique_ptr<nn::Linear<float>> head_;
  nn::Loss<float> loss_{nn::LossKind::cross_entropy};
  Tensor<float>*ids_, *pos_ids_, *targets_, *x0_, *dlogits_, *da_, *db_, *dc_, *dwide_, *dwide2_;
  int n_ = 0;
};

ModelFamily transformer_family();

}  // namespace hpct::lm
