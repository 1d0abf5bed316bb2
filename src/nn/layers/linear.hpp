// Linear: y = act(x W^T + b), W [out, in] as PyTorch's nn.Linear, with an optional activation fused
// into the bias kernel (a GEMM epilogue). The GEMMs go through nn/gemm.hpp (OpenBLAS / cuBLAS).
// Obeys Note [the gradient rule] (nn/layer.hpp); registers "<name>/weight" (decayed) and
// "<name>/bias" (not decayed) with nn.Linear's initialisation; nn.Linear(bias=False) registers no bias.
// bf16/fp16 on GPU builds: tensor-core GEMMs on half copies of the weights (Note [half GEMMs]).
#pragma once

#include <string>

#include "nn/activation.hpp"
#include "nn/layer.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class Linear : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;

  Linear(Store& store, Workspace<Scalar>& ws, const std::string& name, int in, int out, int capacity,
         Activation act = Activation::identity, Precision precision = Precision::fp32, bool bias = true);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }
  // Whether the GEMMs take half-precision operands (bf16/fp16 float layers on GPU builds).
  bool half_gemms() const { return half_; }

  int in() const { return in_; }
  int out() const { return out_; }
  Activation activation() const { return act_; }
  bool has_bias() const { return has_bias_; }

 private:
  int in_, out_;
  Activation act_;
  Precision precision_;
  bool has_bias_;
  const Store* store_ = nullptr;
  std::size_t w_index_, b_index_;
  typename Store::Matrix w_, dw_;
  typename Store::Vector b_, db_;
  // What backward needs of the pre-activation z: z itself, or sigmoid(z) for silu (silu' = s + y (1 - s)).
  T* z_ = nullptr;
  T* y_ = nullptr;
  T* dz_ = nullptr;    // dL/dz, so that dy stays untouched
  T* ones_ = nullptr;  // [capacity] of 1: the bias gradient as a GEMM (filled by the first backward)
  bool ones_filled_ = false;
  View2<Scalar> w_lowp_;  // the weights rounded to the compute precision (bf16/fp16 host emulation)
  // Note [half GEMMs] on GPU builds: the weights as bf16/fp16 bit patterns, refreshed when the
  // parameter generation moves (once per optimizer step, nn/parameter_generation.hpp); x and dz are
  // converted per GEMM into the two other buffers.
  void forward_half(const T& x, int n, const T& target);
  void backward_half(const T& x, const typename T::Matrix& dz, const T& dx, GradMode mode, int n);
  // Note [chunk gradients] (nn/parameters.hpp): dW and db of each chunk's rows into its slot, or of
  // the micro-batch as one chunk (Note [fixed-order chunk sums] in linear_chunk_sums.cpp).
  void chunk_parameter_gradients(const T& x, const typename T::Matrix& dz, int n) const;
  // Note [gradient bounds]: this backward's bound on dW and db, from max |dz| and max |x|.
  void record_gradient_bounds(const T& x, const typename T::Matrix& dz, int n) const;
  bool bounds_recorded_ = false;  // host builds, float-operand GEMMs: the store's bounds come from here
  int capacity_;
  bool half_ = false;
  std::uint64_t w_generation_ = 0;
  View1<std::uint16_t> w_half_, x_half_, dz_half_;
};

}  // namespace hpct::nn
