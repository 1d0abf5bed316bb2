// The edge MLP of an interaction-network layer: GnnMlp (Linear-SiLU-Linear-LayerNorm) on the
// edge input cat(edge, sender, receiver), with its first Linear split by input block so that the
// sender and receiver products are computed once per node, not once per edge.
//
// Note [split edge Linear]: fc1 is y = silu(cat(e, s[snd], r[rcv]) W^T + b), W [L, 3L]. With W's
// column blocks W_e, W_s, W_r ([L, L] each) this is silu(e W_e^T + (s W_s^T)[snd] + (r W_r^T)[rcv] + b):
// the same function (equal up to rounding) with the node GEMMs over the nodes (6-7 mesh edges per
// mesh node, 4 edges per grid point in the decoder), about a third of the layer's FLOPs less, and no
// [E, 3L] input row to build. Backward: dz summed per sender / receiver (index groups, fixed order:
// Note [batched graphs]), then the weight-gradient and input-gradient GEMMs per block. The stored
// parameters are fc1's as nn::Linear registers them ("<name>/fc1/weight" [L, 3L], "<name>/fc1/bias"),
// so weights files, checkpoints and the PyTorch rebuild are unchanged; the blocks are copied out of
// W into a contiguous [3L, L] buffer each forward (3 L^2 values, negligible next to the GEMMs).
//
// Note [static edge input]: where the edge input is the same for every sample (the embedding of the
// graph's own edge features: the encoder's, the decoder's and the first processor layer's edges,
// Note [static embeddings once per batch] in gnn_net.cpp), e W_e^T is computed for one sample and
// read by every sample's SiLU kernel; in backward dz is first summed over the samples (sample
// order), so dW_e = (sum_b dz_b)^T e and dL/de = (sum_b dz_b) W_e are one sample's GEMMs, and
// d_edge receives the gradient summed over the samples in its first E rows (the caller sums the
// rest of that edge input's gradient the same way). About a third of those layers' edge FLOPs.
#pragma once

#include <memory>
#include <string>

#include "models/gnn/graph_kernels.hpp"
#include "nn/layers/layer_norm.hpp"
#include "nn/layers/linear.hpp"

namespace hpct {

template <class Scalar>
class EdgeMlp {
 public:
  using T = Tensor<Scalar>;
  using Store = nn::ParameterStore<Scalar>;
  // Registers "<name>/fc1/{weight,bias}", "<name>/fc2/...", "<name>/norm/..." (as GnnMlp(3L, L, L)).
  EdgeMlp(Store& store, nn::Workspace<Scalar>& ws, const std::string& name, const DeviceEdges& g, int latent,
          int capacity, nn::Precision precision = nn::Precision::fp32, bool static_edges = false);
  void bind(const Store& store);
  // edge [n E, L] ([E, L] read when static_edges), send [n S, L], recv [n R, L] -> messages [n E, L].
  const T& forward(const T& edge, const T& send, const T& recv, int n);
  // From dy = dL/d(messages) for the inputs of the last forward: d_edge, then d_recv, then d_send,
  // each assigned or accumulated (`*_acc`; empty: skipped), so that one tensor may serve as d_recv
  // and d_send (accumulating) when senders and receivers are one node set. With static_edges,
  // d_edge [E, L]: summed over the samples (Note [static edge input]).
  void backward(const T& edge, const T& send, const T& recv, const T& dy, int n, const T& d_edge, bool edge_acc,
                const T& d_send, bool send_acc, const T& d_recv, bool recv_acc);
  const T& output() const { return norm_->output(); }
  double flops_per_sample() const;

 private:
  typename T::Matrix block(const T& t, int k) const;  // rows [k L, (k + 1) L) of a [3L, L] tensor

  const DeviceEdges& g_;
  int latent_;
  nn::Precision precision_;
  bool static_edges_;
  const Store* store_ = nullptr;
  std::size_t w_index_, b_index_;  // fc1, registered before fc2 and norm (Note [registration order])
  nn::Linear<Scalar> fc2_;
  std::unique_ptr<nn::LayerNorm<Scalar>> norm_;
  typename Store::Matrix w_, dw_;
  typename Store::Vector b_, db_;
  T* wb_ = nullptr;     // [3L, L]: W_e, W_s, W_r, each row-major [L, L]
  T* dwb_ = nullptr;    // [3L, L]: their gradients before they are added into dW
  T* z_ = nullptr;      // [cap E, L]: e W_e^T, then sigmoid(z) (what silu' needs)
  T* y_ = nullptr;      // [cap E, L]: silu(z)
  T* ps_ = nullptr;     // [cap S, L]: s W_s^T
  T* pr_ = nullptr;     // [cap R, L]: r W_r^T
  T* dz_ = nullptr;     // [cap E, L]: dL/dz
  T* dps_ = nullptr;    // [cap S, L]: dL/dz summed per sender
  T* dpr_ = nullptr;    // [cap R, L]: dL/dz summed per receiver
  T* dh_ = nullptr;     // [cap E, L]: dL/dy
  T* dnorm_ = nullptr;  // [cap E, L]: dL/d(fc2 output)
  T* ones_ = nullptr;   // [cap E, 1]: the bias gradient as a GEMM
  T* ze_ = nullptr;     // [E, L] with static_edges: e W_e^T of the one edge input
  T* dzs_ = nullptr;    // [E, L] with static_edges: dz summed over the samples
};

}  // namespace hpct
