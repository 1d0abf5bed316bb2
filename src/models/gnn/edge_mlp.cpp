// The interaction network's edge MLP with its first Linear split by input block (see edge_mlp.hpp).
#include "models/gnn/edge_mlp.hpp"

#include "nn/elementwise.hpp"
#include "nn/gemm.hpp"

namespace hpct {

namespace gnn_kernels {

// wb(k L + i, j) = w(i, k L + j): W's column blocks as three contiguous [L, L] matrices.
template <class Matrix>
void split_blocks(const Matrix& w, const Matrix& wb, int latent) {
  const int L = latent;
  nn::for_each_cell(
      "gnn_split_w", 3 * L, L, KOKKOS_LAMBDA(const int r, const int j) { wb(r, j) = w(r % L, (r / L) * L + j); });
}

// dw(i, k L + j) += dwb(k L + i, j): the blocks' gradients back into W's.
template <class Matrix>
void add_blocks(const Matrix& dwb, const Matrix& dw, int latent) {
  const int L = latent;
  nn::for_each_cell(
      "gnn_split_dw", 3 * L, L,
      KOKKOS_LAMBDA(const int r, const int j) { dw(r % L, (r / L) * L + j) += dwb(r, j); });
}

// z(r) = ze(r % ze_rows) + ps(sender) + pr(receiver) + b, then y = silu(z) and z = sigmoid(z) (kept
// for silu'); ze is z itself (ze_rows = n E) or one sample's edge products (Note [static edge input]).
template <class Matrix, class Vector>
void edge_silu(const DeviceEdges& g, const Matrix& ze, int ze_rows, const Matrix& z, const Matrix& ps,
               const Matrix& pr, const Vector& b, const Matrix& y, int n, int width) {
  using S = typename Matrix::non_const_value_type;
  const auto sk = g.by_sender.keys(), rk = g.by_receiver.keys();
  const auto E = static_cast<int>(g.edges), NS = static_cast<int>(g.senders), NR = static_cast<int>(g.receivers);
  nn::for_each_cell(
      "gnn_edge_silu", n * E, width, KOKKOS_LAMBDA(const int r, const int j) {
        const int bb = r / E, e = r % E;
        const S zz = ze(r % ze_rows, j) + ps(bb * NS + sk(e), j) + pr(bb * NR + rk(e), j) + b(j);
        const S sg = nn::sigmoid(zz);
        z(r, j) = sg;
        y(r, j) = zz * sg;
      });
}

// dz = dy silu'(z) with s = sigmoid(z), y = silu(z): silu' = s + y (1 - s).
template <class Matrix>
void silu_grad(const Matrix& s, const Matrix& y, const Matrix& dy, const Matrix& dz, int rows, int cols) {
  using S = typename Matrix::non_const_value_type;
  nn::for_each_cell(
      "gnn_silu_bw", rows, cols, KOKKOS_LAMBDA(const int i, const int j) {
        const S sg = s(i, j);
        dz(i, j) = dy(i, j) * (sg + y(i, j) * (S(1) - sg));
      });
}

}  // namespace gnn_kernels

template <class Scalar>
EdgeMlp<Scalar>::EdgeMlp(Store& store, nn::Workspace<Scalar>& ws, const std::string& name, const DeviceEdges& g,
                         int latent, int capacity, nn::Precision precision, bool static_edges)
    : g_(g),
      latent_(latent),
      precision_(precision),
      static_edges_(static_edges),
      w_index_(store.add(name + "/fc1/weight", {std::uint64_t(latent), 3 * std::uint64_t(latent)},
                         nn::Init::linear(3 * std::uint64_t(latent)), true)),
      b_index_(store.add(name + "/fc1/bias", {std::uint64_t(latent)}, nn::Init::linear(3 * std::uint64_t(latent)),
                         false)),
      fc2_(store, ws, name + "/fc2", latent, latent, capacity * static_cast<int>(g.edges), nn::Activation::identity,
           precision) {
  const std::int64_t L = latent, E = capacity * g.edges, S = capacity * g.senders, R = capacity * g.receivers;
  norm_ = std::make_unique<nn::LayerNorm<Scalar>>(store, ws, name + "/norm", Shape{E, L}, 1e-5, precision);
  wb_ = &ws.request(name + "/fc1/wb", 3 * L, L);
  dwb_ = &ws.request(name + "/fc1/dwb", 3 * L, L);
  z_ = &ws.request(name + "/fc1/z", E, L);
  y_ = &ws.request(name + "/fc1/y", E, L);
  ps_ = &ws.request(name + "/fc1/ps", S, L);
  pr_ = &ws.request(name + "/fc1/pr", R, L);
  dz_ = &ws.request(name + "/fc1/dz", E, L);
  dps_ = &ws.request(name + "/fc1/dps", S, L);
  dpr_ = &ws.request(name + "/fc1/dpr", R, L);
  dh_ = &ws.request(name + "/dh", E, L);
  dnorm_ = &ws.request(name + "/dz", E, L);
  ones_ = &ws.request(name + "/fc1/ones", E, 1);
  ws.keep(*ones_);  // filled by bind(), read by every backward (Note [recomputed units])
  if (static_edges) {
    ze_ = &ws.request(name + "/fc1/ze", g.edges, L);
    dzs_ = &ws.request(name + "/fc1/dzs", g.edges, L);
  }
}

template <class Scalar>
void EdgeMlp<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.matrix(w_index_);
  dw_ = store.grad_matrix(w_index_);
  b_ = store.vector(b_index_);
  db_ = store.grad_vector(b_index_);
  const auto ones = ones_->flat();
  Kokkos::parallel_for(
      "gnn_ones", range(0, ones.extent(0)), KOKKOS_LAMBDA(const std::size_t i) { ones(i) = Scalar(1); });
  fc2_.bind(store);
  norm_->bind(store);
}

template <class Scalar>
typename Tensor<Scalar>::Matrix EdgeMlp<Scalar>::block(const T& t, int k) const {
  const auto L = static_cast<std::size_t>(latent_);
  return typename T::Matrix(t.data() + k * L * L, L, L);
}

template <class Scalar>
const Tensor<Scalar>& EdgeMlp<Scalar>::forward(const T& edge, const T& send, const T& recv, int n) {
  const int L = latent_, E = n * static_cast<int>(g_.edges);
  const int S = n * static_cast<int>(g_.senders), R = n * static_cast<int>(g_.receivers);
  const bool lowp = precision_ != nn::Precision::fp32;
  gnn_kernels::split_blocks(typename T::Matrix(w_), wb_->matrix(), L);
  if (lowp) nn::round_values(precision_, wb_->data(), std::int64_t{3} * L * L);
  const int Ee = static_edges_ ? static_cast<int>(g_.edges) : E;  // edge rows multiplied
  const T& ze = static_edges_ ? *ze_ : *z_;
  nn::gemm('N', 'T', Scalar(1), edge.rows(Ee), block(*wb_, 0), Scalar(0), ze.rows(Ee));
  nn::gemm('N', 'T', Scalar(1), send.rows(S), block(*wb_, 1), Scalar(0), ps_->rows(S));
  nn::gemm('N', 'T', Scalar(1), recv.rows(R), block(*wb_, 2), Scalar(0), pr_->rows(R));
  gnn_kernels::edge_silu(g_, ze.matrix(), Ee, z_->matrix(), ps_->matrix(), pr_->matrix(), b_, y_->matrix(), n, L);
  if (lowp) {
    nn::round_values(precision_, y_->data(), static_cast<std::int64_t>(E) * L);
    nn::round_values(precision_, z_->data(), static_cast<std::int64_t>(E) * L);
  }
  fc2_.forward(*y_, E);
  norm_->forward(fc2_.output(), E);
  return norm_->output();
}

template <class Scalar>
void EdgeMlp<Scalar>::backward(const T& edge, const T& send, const T& recv, const T& dy, int n, const T& d_edge,
                               bool edge_acc, const T& d_send, bool send_acc, const T& d_recv, bool recv_acc) {
  const int L = latent_, E = n * static_cast<int>(g_.edges);
  const int S = n * static_cast<int>(g_.senders), R = n * static_cast<int>(g_.receivers);
  const bool lowp = precision_ != nn::Precision::fp32;
  norm_->backward(fc2_.output(), dy, *dnorm_, nn::GradMode::assign, E);
  fc2_.backward(*y_, *dnorm_, *dh_, nn::GradMode::assign, E);
  gnn_kernels::silu_grad(z_->matrix(), y_->matrix(), dh_->matrix(), dz_->matrix(), E, L);
  if (lowp) nn::round_values(precision_, dz_->data(), static_cast<std::int64_t>(E) * L);
  // The node products' gradients: dz summed over each node's edges (fixed order, no atomics).
  sum_edges_into_nodes(g_.by_sender, g_.edges, dz_->matrix(), 0, dps_->rows(S), n, false);
  sum_edges_into_nodes(g_.by_receiver, g_.edges, dz_->matrix(), 0, dpr_->rows(R), n, false);
  // db [1, L] += 1 [1, E] dz [E, L] (a GEMM, as nn::Linear's), then the blocks' dW.
  const typename Store::Matrix db_row(db_.data(), 1, static_cast<std::size_t>(L));
  const typename Store::Matrix ones_row(ones_->data(), 1, static_cast<std::size_t>(E));
  nn::gemm('N', 'N', Scalar(1), ones_row, dz_->rows(E), Scalar(1), db_row);
  // The edge block's: dz summed over the samples first when the edge input is static.
  const int Ee = static_edges_ ? static_cast<int>(g_.edges) : E;
  if (static_edges_) sum_samples(dz_->matrix(), g_.edges, n, dzs_->matrix(), false);
  const T& dze = static_edges_ ? *dzs_ : *dz_;
  nn::gemm('T', 'N', Scalar(1), dze.rows(Ee), edge.rows(Ee), Scalar(0), block(*dwb_, 0));
  nn::gemm('T', 'N', Scalar(1), dps_->rows(S), send.rows(S), Scalar(0), block(*dwb_, 1));
  nn::gemm('T', 'N', Scalar(1), dpr_->rows(R), recv.rows(R), Scalar(0), block(*dwb_, 2));
  gnn_kernels::add_blocks(dwb_->matrix(), typename T::Matrix(dw_), L);
  store_->report_ready(w_index_, b_index_);
  // The inputs' gradients, d_recv before d_send (they may be one tensor).
  const auto input_grad = [&](const T& d, bool acc, const T& dp, int rows, int k) {
    if (d.empty()) return;
    nn::gemm('N', 'N', Scalar(1), dp.rows(rows), block(*wb_, k), acc ? Scalar(1) : Scalar(0), d.rows(rows));
    if (lowp) nn::round_values(precision_, d.data(), static_cast<std::int64_t>(rows) * L);
  };
  input_grad(d_edge, edge_acc, dze, Ee, 0);
  input_grad(d_recv, recv_acc, *dpr_, R, 2);
  input_grad(d_send, send_acc, *dps_, S, 1);
}

template <class Scalar>
double EdgeMlp<Scalar>::flops_per_sample() const {
  // Multiply-adds x 2: fc1's edge block and fc2 per edge, fc1's sender / receiver blocks per node.
  const double L = latent_;
  return static_cast<double>(g_.edges) * 4.0 * L * L + static_cast<double>(g_.senders + g_.receivers) * 2.0 * L * L;
}

template class EdgeMlp<float>;
template class EdgeMlp<double>;

}  // namespace hpct
