// LayerNorm over the last dimension, as torch.nn.LayerNorm(D, eps): for each row r of D values
// (a tensor [n, ..., D] is n * (row_size / D) such rows), y = (x - mean) / sqrt(var + eps) * w + b
// with the biased variance. Registers "<name>/weight" (ones) and "<name>/bias" (zeros), neither
// decayed. Obeys Note [the gradient rule] (nn/layer.hpp).
//
// Note [layer norm numerics]: mean and variance are taken in double with two passes (the mean,
// then the squared deviations from it), so a large offset does not cancel the variance; the
// backward is the exact gradient dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w,
// again with double sums, each in 8 lanes (Note [layer norm lanes], layer_norm.cpp). One work item
// per row (forward, dx) loops in a fixed order; dw and db are summed over rows in two fixed stages
// (Note [layer norm parameter sums]), so no result depends on the thread count or backend.
//
// Note [layer norm parameter sums]: one work item per feature looping over every row left a GPU
// with only D threads. Instead one work item per (block of kRowsPerBlock rows, feature) sums its
// block in row order into a double partial (a buffer sized for the largest batch, allocated once),
// and one per feature then adds the partials in block order. The association is fixed by the block
// size alone, the same on every backend and thread count; up to kRowsPerBlock rows it is the plain
// row-order sum.
#pragma once

#include <string>

#include "nn/layer.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class LayerNorm : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  // `shape`: the input's shape for the largest batch; its last dimension is normalised.
  LayerNorm(Store& store, Workspace<Scalar>& ws, const std::string& name, const Shape& shape, double eps = 1e-5,
            Precision precision = Precision::fp32);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }
  // Note [layer norm with relu]: from now on output() is relu(LayerNorm(x)) and backward takes the
  // gradient of that, as LayerNorm followed by ActivationLayer(relu) but with no [rows, D] pass or
  // buffer of its own: the forward clamps as it writes y, and the backward masks dy by y > 0
  // (which holds exactly where the normalised value was > 0) as it reads it, multiplying by 1 or 0
  // as activate_grad does, so the same bits as the two layers.
  void fuse_relu() { relu_ = true; }
  int features() const { return features_; }
  double eps() const { return eps_; }

 private:
  // [n * rows_per_sample_, features_] over the first n samples of t.
  typename T::Matrix norm_rows(const T& t, int n) const;
  int features_;
  std::int64_t rows_per_sample_;
  double eps_;
  bool relu_ = false;
  Precision precision_;
  const Store* store_ = nullptr;
  std::size_t w_index_, b_index_;
  typename Store::Vector w_, b_, dw_, db_;
  T* y_ = nullptr;
  T* mean_ = nullptr;  // per normalised row, for backward
  T* rstd_ = nullptr;  // 1 / sqrt(var + eps) per normalised row
  static constexpr int kRowsPerBlock = 32;
  Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> partial_;  // [blocks, 2 * features]: dw, db sums
};

}  // namespace hpct::nn
