// The mlp network: Linear layers d_in -> hidden... -> d_out with one activation (fused into each
// hidden Linear) and a linear output, chained by nn::Sequential. Layers are named fc0, fc1, ... so
// the weights file maps 1:1 onto a PyTorch module of nn.Linear attributes. With category embeddings
// (a table's codes, Note [category embeddings] in gbdt/table_encoding.cpp) the last inputs are codes,
// each looked up in its table emb0, emb1, ... (nn.Embedding) before fc0.
#pragma once

#include <string>
#include <vector>

#include "nn/layers/linear.hpp"
#include "nn/sequential.hpp"

namespace hpct {

struct MlpConfig {
  int d_in = 0, d_out = 0;
  std::vector<int> hidden;
  nn::Activation activation = nn::Activation::relu;
  // The last embedding_rows.size() of the d_in inputs are category codes, input d_in - C + c looked
  // up in table c of embedding_rows[c] rows x embedding_dim; empty: every input is a number.
  std::vector<int> embedding_rows{};
  int embedding_dim = 0;
  // The first Linear's inputs: the numbers and the embedded rows.
  int fc0_in() const {
    const int c = static_cast<int>(embedding_rows.size());
    return d_in - c + c * embedding_dim;
  }
};

template <class Scalar>
class Mlp {
 public:
  using Matrix = typename Tensor<Scalar>::Matrix;
  // Registers and allocates the parameters and one workspace for batches of up to `capacity` rows.
  Mlp(const MlpConfig& config, int capacity, nn::Precision precision = nn::Precision::fp32);

  // Rows [0, n) of x -> rows [0, n) of the returned output.
  Matrix forward(const Tensor<Scalar>& x, int n);
  // dL/d(output): fill rows [0, n), then call backward with the x of the last forward.
  Matrix output_grad() const { return dout_->matrix(); }
  const Tensor<Scalar>& output_grad_tensor() const { return *dout_; }
  void backward(const Tensor<Scalar>& x, int n);

  nn::ParameterStore<Scalar>& store() { return store_; }
  const nn::ParameterStore<Scalar>& store() const { return store_; }
  const MlpConfig& config() const { return config_; }
  int capacity() const { return capacity_; }
  // Multiply-adds x 2 of one sample's forward pass.
  double forward_flops() const;

 private:
  MlpConfig config_;
  int capacity_;
  nn::ParameterStore<Scalar> store_;
  nn::Workspace<Scalar> ws_;
  nn::Sequential<Scalar> net_;
  Tensor<Scalar>* dout_ = nullptr;
};

}  // namespace hpct
