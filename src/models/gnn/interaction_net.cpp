// The interaction-network layer's forward and backward (see interaction_net.hpp).
#include "models/gnn/interaction_net.hpp"

namespace hpct {

namespace gnn_kernels {

// out (=|+=) a + b (+ c when not empty), rows [0, rows), the first `cols` columns of each (a, b and c
// may be wider: their columns from `a_first`, `b_first`).
// The two choices are template arguments: a branch in the kernel (a conditional load) kept the host
// loop from vectorising.
template <bool kAccumulate, bool kWithC, class Matrix>
void add_into_cells(const char* label, const Matrix& out, const Matrix& a, const Matrix& b, int b_first,
                    const Matrix& c, int rows, int cols) {
  nn::for_each_cell(
      label, rows, cols, KOKKOS_LAMBDA(const int i, const int j) {
        auto v = a(i, j) + b(i, b_first + j);
        // Plain ifs on the constants (folded away): nvcc rejects a lambda's first capture of a view
        // inside an if constexpr.
        if (kWithC) v += c(i, j);
        if (kAccumulate) v += out(i, j);
        out(i, j) = v;
      });
}

template <class Matrix>
void add_into(const char* label, const Matrix& out, bool accumulate, const Matrix& a, const Matrix& b, int b_first,
              const Matrix& c, bool with_c, int rows, int cols) {
  if (accumulate && with_c) add_into_cells<true, true>(label, out, a, b, b_first, c, rows, cols);
  else if (accumulate) add_into_cells<true, false>(label, out, a, b, b_first, c, rows, cols);
  else if (with_c) add_into_cells<false, true>(label, out, a, b, b_first, c, rows, cols);
  else add_into_cells<false, false>(label, out, a, b, b_first, c, rows, cols);
}

}  // namespace gnn_kernels

template <class Scalar>
InteractionNet<Scalar>::InteractionNet(nn::ParameterStore<Scalar>& store, nn::Workspace<Scalar>& ws,
                                       const std::string& name, const DeviceEdges& g, int latent, int capacity,
                                       nn::Precision precision, bool static_edges, bool edge_output)
    : g_(g),
      latent_(latent),
      static_edges_(static_edges),
      edge_output_(edge_output),
      edge_mlp_(store, ws, name + "/edge_mlp", g, latent, capacity, precision, static_edges),
      cat_(ws, name + "/cat", latent, latent, capacity * g.receivers),
      node_mlp_(store, ws, name + "/node_mlp", 2 * latent, latent, latent, capacity * g.receivers, true,
                precision) {
  const std::int64_t E = capacity * g.edges, R = capacity * g.receivers;
  agg_ = &ws.request(name + "/agg", R, latent);
  recv_out_ = &ws.request(name + "/recv_out", R, latent);
  if (edge_output) edge_out_ = &ws.request(name + "/edge_out", E, latent);
  d_cat2_ = &ws.request(name + "/d_cat2", R, 2 * latent);
  d_msg_ = &ws.request(name + "/d_msg", E, latent);
}

template <class Scalar>
void InteractionNet<Scalar>::bind(const nn::ParameterStore<Scalar>& store) {
  edge_mlp_.bind(store);
  node_mlp_.bind(store);
}

template <class Scalar>
void InteractionNet<Scalar>::forward(const T& edge, const T& send, const T& recv, int n) {
  using gnn_kernels::add_into;
  const int L = latent_, E = n * static_cast<int>(g_.edges), R = n * static_cast<int>(g_.receivers);
  const T& msg = edge_mlp_.forward(edge, send, recv, n);
  sum_edges_into_nodes(g_.by_receiver, g_.edges, msg.matrix(), 0, agg_->matrix(), n, false);
  cat_.forward(recv, *agg_, R);
  const T& upd = node_mlp_.forward(cat_.output(), R);
  const auto none = recv_out_->matrix();
  add_into("gnn_node_res", recv_out_->matrix(), false, recv.matrix(), upd.matrix(), 0, none, false, R, L);
  if (edge_output_)
    add_into("gnn_edge_res", edge_out_->matrix(), false, edge.matrix(), msg.matrix(), 0, none, false, E, L);
}

template <class Scalar>
void InteractionNet<Scalar>::backward(const T& edge, const T& send, const T& recv, const T& d_recv_out,
                                      const T& d_edge_out, const T& d_edge, nn::GradMode edge_mode, const T& d_send,
                                      nn::GradMode send_mode, const T& d_recv, nn::GradMode recv_mode, int n) {
  using gnn_kernels::add_into;
  const int L = latent_, E = n * static_cast<int>(g_.edges), R = n * static_cast<int>(g_.receivers);
  const bool edge_out_used = !d_edge_out.empty();
  const auto none = d_msg_->matrix();
  // Node update: receiver_out = recv + MLP_n(cat(recv, agg)).
  node_mlp_.backward(cat_.output(), d_recv_out, *d_cat2_, nn::GradMode::assign, R);
  // dL/d(msg) = dL/d(agg) read back onto each edge (+ dL/d(edge_out): edge_out = edge + msg).
  gather_nodes_onto_edges(g_.by_receiver, g_.edges, d_cat2_->matrix(), L, d_msg_->matrix(), n, false);
  if (edge_out_used)
    add_into("gnn_msg_grad", d_msg_->matrix(), false, d_msg_->matrix(), d_edge_out.matrix(), 0, none, false, E, L);
  // d_recv's own terms (the residual and the node MLP's input) first, then the edge MLP adds its
  // receiver block's and, into d_send (possibly the same tensor), its sender block's.
  if (!d_recv.empty())
    add_into("gnn_recv_grad", d_recv.matrix(), recv_mode == nn::GradMode::accumulate, d_recv_out.matrix(),
             d_cat2_->matrix(), 0, none, false, R, L);
  edge_mlp_.backward(edge, send, recv, *d_msg_, n, d_edge, edge_mode == nn::GradMode::accumulate, d_send,
                     send_mode == nn::GradMode::accumulate, d_recv, true);
  // edge_out = edge + msg: its gradient reaches the edge input directly too (summed over the
  // samples for a static edge input).
  if (!d_edge.empty() && edge_out_used && static_edges_) {
    sum_samples(d_edge_out.matrix(), g_.edges, n, d_edge.matrix(), true);
  } else if (!d_edge.empty() && edge_out_used) {
    const auto d = d_edge.matrix(), g = d_edge_out.matrix();
    nn::for_each_cell(
        "gnn_edge_grad", E, L, KOKKOS_LAMBDA(const int i, const int j) { d(i, j) += g(i, j); });
  }
}

template <class Scalar>
double InteractionNet<Scalar>::flops_per_sample() const {
  return edge_mlp_.flops_per_sample() + static_cast<double>(g_.receivers) * node_mlp_.flops_per_row();
}

template class InteractionNet<float>;
template class InteractionNet<double>;

}  // namespace hpct
