// FourierFeatures: learnable Fourier features of C continuous inputs (SMART's FourierEmbedding
// front end): with frequencies w [C, F] (parameter "<name>/weight", nn.Embedding(C, F)'s N(0, 1)),
//   theta(i, c, f) = x(i, c) * w(c, f) * 2 * pi
//   block c, row i = [cos theta(i, c, 0..F-1), sin theta(i, c, 0..F-1), x(i, c)]   (2F + 1 values)
// The output is C blocks of [capacity, 2F + 1], block c starting at c * capacity * (2F + 1), so each
// block is a plain matrix that its own per-input MLP (FourierEmbedding) reads without a copy.
// Obeys Note [the gradient rule] (nn/layer.hpp); the frequency gradient is summed over rows by one
// work item per (input, frequency) in row order (deterministic, no atomics).
#pragma once

#include <string>

#include "nn/layer.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class FourierFeatures : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  FourierFeatures(Store& store, Workspace<Scalar>& ws, const std::string& name, int inputs, int freqs, int capacity,
                  Precision precision = Precision::fp32);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  // All C blocks (rows = C * capacity); block(c) is input c's [capacity, 2F + 1] features.
  const T& output() const override { return *y_; }
  T block(int c) const {
    return T(y_->data() + static_cast<std::int64_t>(c) * capacity_ * width(), {capacity_, width()});
  }
  // The same block structure over a gradient tensor laid out like output().
  T block_of(const T& t, int c) const {
    return T(t.data() + static_cast<std::int64_t>(c) * capacity_ * width(), {capacity_, width()});
  }
  int inputs() const { return inputs_; }
  int freqs() const { return freqs_; }
  int width() const { return 2 * freqs_ + 1; }

  // The weight gradient (dw += ...): recomputing the angles, or from y (Note [Fourier weight gradient
  // from y]). Public only because nvcc allows no device lambda in a private member function.
  void weight_grad(const T& x, const T& dy, int n);
  void weight_grad_host(const T& x, const T& dy, int n);

 private:
  int inputs_, freqs_, capacity_;
  Precision precision_;
  const Store* store_ = nullptr;
  std::size_t w_index_;
  typename Store::Matrix w_, dw_;
  T* y_ = nullptr;
};

}  // namespace hpct::nn
