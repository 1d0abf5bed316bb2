// FourierEmbedding: SMART's relative-position encoder. C continuous inputs (distance, angles, time
// offset, ...) become learnable Fourier features (FourierFeatures), each input's features go
// through its own MLP (Linear(2F+1, H), LayerNorm, ReLU, Linear(H, H)), the C results are summed
// (plus an optional categorical embedding [n, H]), and to_out = LayerNorm, ReLU, Linear(H, H).
// Parameter names follow the torch module: "<name>/freqs/weight", "<name>/mlps.<c>.0/weight",
// "<name>/mlps.<c>.1/..." (the LayerNorm), "<name>/mlps.<c>.3/...", "<name>/to_out.0/...",
// "<name>/to_out.2/...". Obeys Note [the gradient rule] (nn/layer.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/layers/fourier_features.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/linear.hpp"

namespace hpct::nn {

template <class Scalar>
class FourierEmbedding : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  FourierEmbedding(Store& store, Workspace<Scalar>& ws, const std::string& name, int inputs, int hidden, int freqs,
                   int capacity, Precision precision = Precision::fp32);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override { forward(x, n, T()); }
  // With a categorical embedding `extra` [n, hidden] added to the sum before to_out (may be empty).
  void forward(const T& x, int n, const T& extra);
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return out_->output(); }
  // After backward: dL/d(sum), which is also the gradient of the categorical embedding.
  const T& sum_grad() const { return *dsum_; }
  int hidden() const { return hidden_; }

  // sum = extra + sum of the per-input MLP outputs. Public only because nvcc allows no device
  // lambda in a private member function.
  void sum_mlps(const T& extra, int n);

 private:
  struct Mlp {
    std::unique_ptr<Linear<Scalar>> in;
    std::unique_ptr<LayerNorm<Scalar>> norm;  // with the ReLU fused (Note [layer norm with relu])
    std::unique_ptr<Linear<Scalar>> out;
  };
  int inputs_, hidden_;
  FourierFeatures<Scalar> features_;
  std::vector<Mlp> mlps_;
  T* sum_ = nullptr;
  std::unique_ptr<LayerNorm<Scalar>> out_norm_;  // to_out.0 and the ReLU to_out.1
  std::unique_ptr<Linear<Scalar>> out_;
  T* dsum_ = nullptr;
  T* dfeat_ = nullptr;  // laid out like features_.output()
  T* da_ = nullptr;     // [capacity, hidden] scratch, reused per stage
  T* db_ = nullptr;
};

}  // namespace hpct::nn
