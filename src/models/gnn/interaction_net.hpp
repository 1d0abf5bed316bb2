// One interaction-network layer on an edge set (neural-lam's InteractionNet, GraphCast's
// processor step): messages m = MLP_e(cat(edge, sender, receiver)) per edge, their sum per
// receiver (fixed order, Note [batched graphs] in graph_kernels.hpp), then
//   receiver_out = receiver + MLP_n(cat(receiver, sum of m)),   edge_out = edge + m.
// Both MLPs are Linear-SiLU-Linear-LayerNorm, registered edge first ("<name>/edge_mlp",
// "<name>/node_mlp"); the edge MLP's first Linear is split by input block (Note [split edge Linear]
// in edge_mlp.hpp). Obeys Note [the gradient rule] (nn/layer.hpp) with its own signatures.
// static_edges: the edge input is the same for every sample (Note [static edge input]): it is read
// as [E, L] where only the edge MLP uses it, and d_edge is one sample's [E, L], summed over the
// samples. edge_output false: the edge output is not computed (the encoder's and decoder's).
#pragma once

#include <string>

#include "models/gnn/edge_mlp.hpp"
#include "models/gnn/gnn_mlp.hpp"
#include "models/gnn/graph_kernels.hpp"
#include "nn/layers/concat.hpp"

namespace hpct {

template <class Scalar>
class InteractionNet {
 public:
  using T = Tensor<Scalar>;
  // For batches of up to `capacity` samples of the graph `g` (which must outlive this layer).
  InteractionNet(nn::ParameterStore<Scalar>& store, nn::Workspace<Scalar>& ws, const std::string& name,
                 const DeviceEdges& g, int latent, int capacity, nn::Precision precision = nn::Precision::fp32,
                 bool static_edges = false, bool edge_output = true);
  void bind(const nn::ParameterStore<Scalar>& store);
  // edge [n E, L], send [n S, L], recv [n R, L] -> receiver_output() [n R, L], edge_output() [n E, L].
  void forward(const T& edge, const T& send, const T& recv, int n);
  const T& receiver_output() const { return *recv_out_; }
  const T& edge_output() const { return *edge_out_; }
  bool has_edge_output() const { return edge_output_; }
  // From dL/d(receiver_output) and dL/d(edge_output) (empty: the edge output is unused), for the
  // inputs of the last forward: d_edge, d_recv, then d_send, each assigned or accumulated as its
  // mode says (empty: skipped). d_recv is complete before d_send is touched, so when senders and
  // receivers are one node set (the mesh) pass one tensor for both, d_send accumulating.
  void backward(const T& edge, const T& send, const T& recv, const T& d_recv_out, const T& d_edge_out,
                const T& d_edge, nn::GradMode edge_mode, const T& d_send, nn::GradMode send_mode, const T& d_recv,
                nn::GradMode recv_mode, int n);
  double flops_per_sample() const;

 private:
  const DeviceEdges& g_;
  int latent_;
  bool static_edges_, edge_output_;
  EdgeMlp<Scalar> edge_mlp_;
  nn::Concat<Scalar> cat_;
  GnnMlp<Scalar> node_mlp_;
  T* agg_ = nullptr;  // [cap R, L]: summed messages
  T* recv_out_ = nullptr;
  T* edge_out_ = nullptr;
  T* d_cat2_ = nullptr;
  T* d_msg_ = nullptr;
};

}  // namespace hpct
