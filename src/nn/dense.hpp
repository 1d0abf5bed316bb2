// A fully connected layer y = act(x W^T + b) with W [out, in] (PyTorch's nn.Linear layout). The
// GEMMs go through KokkosBlas (OpenBLAS / cuBLAS); bias and activation are one fused kernel.
// Buffers for the largest batch are allocated once; forward/backward never allocate.
#pragma once

#include <string>

#include "nn/activation.hpp"
#include "nn/parameters.hpp"

namespace hpct::nn {

template <class Scalar>
class Dense {
 public:
  using Store = ParameterStore<Scalar>;
  using Matrix = View2<Scalar>;

  // Registers "<name>/weight" and "<name>/bias" in the store.
  Dense(Store& store, const std::string& name, int in, int out, Activation act);
  // After store.allocate(): binds the parameter views and allocates activations for `capacity` rows.
  void bind(const Store& store, int capacity);

  // Rows [0, n) of x [*, in] -> rows [0, n) of output() [*, out].
  void forward(const Matrix& x, int n);
  // dy holds dL/dy for rows [0, n) and is overwritten with dL/dz. Accumulates (+=) dL/dW and dL/db
  // into the store's gradient buffer; writes dL/dx into dx unless dx is empty (first layer).
  void backward(const Matrix& x, const Matrix& dy, const Matrix& dx, int n);

  const Matrix& output() const { return y_; }
  int in() const { return in_; }
  int out() const { return out_; }
  Activation activation() const { return act_; }

 private:
  int in_, out_;
  Activation act_;
  std::size_t w_index_, b_index_;
  typename Store::Matrix w_, dw_;
  typename Store::Vector b_, db_;
  // What backward needs of the pre-activation z (z itself; sigmoid(z) for silu) and the output.
  Matrix z_, y_;
  Kokkos::View<Scalar*, Kokkos::LayoutRight, MemSpace> ones_;  // [capacity] of 1, for the bias gradient
};

}  // namespace hpct::nn
