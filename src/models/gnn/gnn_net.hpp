// The gnn network (encoder-processor-decoder on a multi-scale mesh, neural-lam's GraphLAM shape):
// embedders (grid inputs, mesh positions, the three edge sets' features) -> an interaction net
// grid -> mesh (plus a residual MLP on the grid) -> `layers` interaction nets on the mesh -> an
// interaction net mesh -> grid -> a read-out MLP (no LayerNorm) to `d_out` values per grid point.
// Rows are sample-major (Note [batched graphs], graph_kernels.hpp). Parameters register in forward
// order and backward runs in exactly the reverse order (Note [registration order]).
#pragma once

#include <memory>
#include <vector>

#include "models/gnn/gnn_mlp.hpp"
#include "models/gnn/graph_kernels.hpp"
#include "models/gnn/interaction_net.hpp"
#include "models/gnn/mesh_graph.hpp"

namespace hpct {

struct GnnConfig {
  int ny = 0, nx = 0;      // the grid
  int d_in = 0;            // input values per grid point
  int d_out = 0;           // outputs per grid point
  int latent = 256;        // gnn_latent
  int layers = 12;         // gnn_layers (processor)
  bool recompute = false;  // gnn_recompute: Note [recomputed processor layers]
};

template <class Scalar>
class GnnNet {
 public:
  using T = Tensor<Scalar>;
  // On the grid's mesh (build_mesh_graph(ny, nx)), or on a given graph (the icosahedral mesh).
  GnnNet(const GnnConfig& config, int capacity, nn::Precision precision = nn::Precision::fp32);
  GnnNet(const GnnConfig& config, MeshGraph graph, int capacity, nn::Precision precision = nn::Precision::fp32);
  // x [n N, d_in] -> [n N, d_out].
  const T& forward(const T& x, int n);
  // dL/d(output): fill rows [0, n N) of output_grad(), then backward with the x of the last forward;
  // with input_grad, dL/dx is assigned to input_grad() (a rollout trained through its steps).
  const T& output_grad() const { return *d_out_; }
  void backward(const T& x, int n, bool input_grad = false);
  const T& input_grad() const { return *d_x_; }

  nn::ParameterStore<Scalar>& store() { return store_; }
  const GnnConfig& config() const { return c_; }
  const MeshGraph& graph() const { return graph_; }
  // The edge features in km from every grid point's latitude and longitude (Note [edge features on
  // the sphere]); the graph's topology stays.
  void set_sphere_positions(const std::vector<double>& lat, const std::vector<double>& lon);
  int capacity() const { return capacity_; }
  std::size_t workspace_bytes() const { return ws_.bytes(); }
  double forward_flops_per_sample() const;

 private:
  // An interaction net; a recomputed workspace unit with gnn_recompute (Note [recomputed processor layers]).
  std::unique_ptr<InteractionNet<Scalar>> interaction_net(const std::string& name, const DeviceEdges& g,
                                                          bool static_edges, bool edge_output, nn::Precision p);

  GnnConfig c_;
  int capacity_;
  MeshGraph graph_;
  DeviceEdges g2m_, m2m_, m2g_;
  nn::ParameterStore<Scalar> store_;
  nn::Workspace<Scalar> ws_;
  std::int64_t N_, M_;
  GnnMlp<Scalar> grid_embed_, mesh_embed_, g2m_embed_, m2m_embed_, m2g_embed_;
  std::unique_ptr<InteractionNet<Scalar>> encoder_;
  GnnMlp<Scalar> grid_mlp_;
  std::vector<std::unique_ptr<InteractionNet<Scalar>>> processor_;
  std::unique_ptr<InteractionNet<Scalar>> decoder_;
  std::unique_ptr<GnnMlp<Scalar>> readout_;
  // The static inputs (the graph's own features), one sample's rows.
  T *mesh_x_ = nullptr, *g2m_x_ = nullptr, *m2m_x_ = nullptr, *m2g_x_ = nullptr;
  // Embeddings copied to every sample (Note [static embeddings once per batch]).
  T *mesh_h_ = nullptr, *m2m_h_ = nullptr;
  T* grid_h1_ = nullptr;  // grid embedding + grid MLP (the decoder's receivers)
  T* d_x_ = nullptr;
  T *d_out_ = nullptr, *d_go_ = nullptr, *d_gh1_ = nullptr, *d_gh_ = nullptr, *d_mh_ = nullptr;
  T *d_mesh_[2] = {nullptr, nullptr}, *d_edge_[2] = {nullptr, nullptr}, *d_g2m_ = nullptr, *d_m2g_ = nullptr;
};

}  // namespace hpct
