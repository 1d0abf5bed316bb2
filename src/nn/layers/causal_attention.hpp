// CausalAttention: dense causal multi-head self-attention over N token sequences of length L
// (a decoder-only transformer's attention): q, k, v = to_q/to_k/to_v(x) (to_k without bias), token i of a
// sequence attends to tokens 0..i of the same sequence, y = to_out(attention). Input and output
// [N, L, D] (or [N * L, D] rows).
//
// Note [dense causal attention]: per (sequence, head) the scores are one GEMM, S = Q K^T / sqrt(d)
// [L, L], a fused kernel takes the causal softmax of every row (P(i, j) = 0 for j > i), and the output
// is a second GEMM, P V; the backward is dP = dO V^T, dS = P * (dP - rowsum(dP * P)) / sqrt(d) (the
// same fused row kernel), dQ = dS K, dK = dS^T Q, dV = P^T dO. All GEMMs go through gemm_batched
// (nn/gemm_batched.hpp) on the heads' columns in place, so no permutation copies; P and dP live in
// the workspace ([N * heads * L, L] each, sized for the largest batch), nothing is allocated in a
// step, and every sum has a fixed order (deterministic). The masked upper triangle is computed by
// the score GEMM and zeroed, as PyTorch's explicit form does: a GEMM over the full square is faster
// than an index-addressed walk over the L (L + 1) / 2 causal pairs (the edge-list form this layer
// had before, over EdgeSoftmax, was 2.5-10x slower than PyTorch at 1 thread; docs/smart-results.md).
// Obeys Note [the gradient rule] (nn/layer.hpp).
#pragma once

#include <string>

#include "nn/layers/linear.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class CausalAttention : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  CausalAttention(Store& store, Workspace<Scalar>& ws, const std::string& name, int dim, int heads, int seq_len,
                  int max_sequences, Precision precision = Precision::fp32);
  void bind(const Store& store) override;
  // n sequences: rows [0, n L) of x.
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return y_; }
  int seq_len() const { return seq_len_; }
  // The attention weights of the last forward: row (s * heads + h) * L + i holds P(i, .) of
  // sequence s, head h (zeros above the diagonal).
  const T& attention() const { return *p_; }

  // The fused row kernels of Note [dense causal attention]; public only because nvcc allows no
  // device lambda in a private member function.
  void softmax_rows(int n);
  void softmax_grad_rows(int n);

 private:
  T tokens(const T& t) const;  // t as [rows * L / L, D] token rows
  int dim_, heads_, head_dim_, seq_len_, max_sequences_;
  Precision precision_;
  Linear<Scalar> to_q_, to_k_, to_v_;
  Linear<Scalar> to_out_;
  T* p_ = nullptr;    // [max_sequences * heads * L, L]: scores, then their softmax P
  T* dp_ = nullptr;   // the same shape: dP, then dS
  T* att_ = nullptr;  // [max_sequences * L, D]: P V, the heads side by side (to_out's input)
  T* dq_ = nullptr;
  T* dk_ = nullptr;
  T* dv_ = nullptr;
  T* datt_ = nullptr;
  T y_;
};

}  // namespace hpct::nn
