// The MLP of every gnn block: Linear -> SiLU -> Linear, then a LayerNorm on the output (dropped for
// the final read-out), as neural-lam's and GraphCast's MLPs. Parameters "<name>/fc1", "<name>/fc2",
// "<name>/norm". Obeys Note [the gradient rule] (nn/layer.hpp); rows = the tensor rows to process.
#pragma once

#include <memory>
#include <string>

#include "nn/layers/layer_norm.hpp"
#include "nn/layers/linear.hpp"

namespace hpct {

template <class Scalar>
class GnnMlp {
 public:
  using T = Tensor<Scalar>;
  GnnMlp(nn::ParameterStore<Scalar>& store, nn::Workspace<Scalar>& ws, const std::string& name, int in, int hidden,
         int out, std::int64_t max_rows, bool layer_norm, nn::Precision precision = nn::Precision::fp32)
      : fc1_(store, ws, name + "/fc1", in, hidden, static_cast<int>(max_rows), nn::Activation::silu, precision),
        fc2_(store, ws, name + "/fc2", hidden, out, static_cast<int>(max_rows), nn::Activation::identity,
             precision) {
    dh_ = &ws.request(name + "/dh", max_rows, hidden);
    if (layer_norm) {
      norm_ = std::make_unique<nn::LayerNorm<Scalar>>(store, ws, name + "/norm", Shape{max_rows, out}, 1e-5,
                                                      precision);
      dz_ = &ws.request(name + "/dz", max_rows, out);
    }
  }
  void bind(const nn::ParameterStore<Scalar>& store) {
    fc1_.bind(store);
    fc2_.bind(store);
    if (norm_) norm_->bind(store);
  }
  const T& forward(const T& x, int rows) {
    fc1_.forward(x, rows);
    fc2_.forward(fc1_.output(), rows);
    if (!norm_) return fc2_.output();
    norm_->forward(fc2_.output(), rows);
    return norm_->output();
  }
  // dy: dL/d(output) for the x of the last forward; dx assigned or accumulated (empty: skipped).
  void backward(const T& x, const T& dy, const T& dx, nn::GradMode mode, int rows) {
    const T* d = &dy;
    if (norm_) {
      norm_->backward(fc2_.output(), dy, *dz_, nn::GradMode::assign, rows);
      d = dz_;
    }
    fc2_.backward(fc1_.output(), *d, *dh_, nn::GradMode::assign, rows);
    fc1_.backward(x, *dh_, dx, mode, rows);
  }
  const T& output() const { return norm_ ? norm_->output() : fc2_.output(); }
  // Multiply-adds x 2 per row (the two GEMMs).
  double flops_per_row() const { return 2.0 * (fc1_.in() * fc1_.out() + fc2_.in() * fc2_.out()); }

 private:
  nn::Linear<Scalar> fc1_, fc2_;
  std::unique_ptr<nn::LayerNorm<Scalar>> norm_;
  T* dh_ = nullptr;
  T* dz_ = nullptr;
};

}  // namespace hpct
