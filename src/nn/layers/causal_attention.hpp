// CausalAttention: dense causal multi-head self-attention over N token sequences of length L
// (a decoder-only transformer's attention): q, k, v = to_q/to_k/to_v(x) (to_k without bias), token i of a sequence
// attends to tokens 0..i of the same sequence, y = to_out(attention). Input and output [N, L, D]
// (or [N * L, D] rows). It shares EdgeSoftmax's kernels: the causal mask is the edge list
// {(j -> i) : j <= i} per sequence, built once for the largest batch in sequence order, so the
// edges of the first n sequences are a prefix of it (Note [causal edges as a prefix]).
//
// Note [causal edges as a prefix]: a smaller batch (the last of an epoch) groups the prefix again
// on the host (an O(n L^2) counting sort into the buffers of the constructor, no allocation); the
// same n as the previous call reuses the grouping. O(L^2) edges per sequence is what a dense
// causal attention computes too; the edge form costs an index load per score.
// Obeys Note [the gradient rule] (nn/layer.hpp).
#pragma once

#include <string>
#include <vector>

#include "nn/layers/edge_softmax.hpp"
#include "nn/layers/linear.hpp"

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

 private:
  T tokens(const T& t) const;  // t as [rows * L / L, D] token rows
  void set_sequences(int n);
  int dim_, seq_len_, max_sequences_, edges_per_sequence_;
  int current_n_ = -1;
  std::vector<int> src_, dst_;  // causal edges for max_sequences, sequence-major
  Linear<Scalar> to_q_, to_k_, to_v_;
  EdgeSoftmax<Scalar> core_;
  Linear<Scalar> to_out_;
  T* dq_ = nullptr;
  T* dk_ = nullptr;
  T* dv_ = nullptr;
  T* dagg_ = nullptr;
  T y_;
};

}  // namespace hpct::nn
