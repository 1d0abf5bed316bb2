// EdgeAttention: projections, the edge softmax and the sigmoid gate (see edge_attention.hpp).
#include "nn/layers/edge_attention.hpp"

#include "nn/elementwise.hpp"

namespace hpct::nn {

namespace {
int cap(std::int64_t rows) { return static_cast<int>(rows); }  // Linear's capacity argument

// Rows [0, n) of `from` into rows [row0, row0 + n) of `to` (Note [key/value cache]).
template <class Scalar>
void copy_rows(const Tensor<Scalar>& from, const Tensor<Scalar>& to, int n, std::int64_t row0) {
  const auto f = from.matrix(), t = to.matrix();
  const auto r0 = static_cast<int>(row0);
  for_each_cell(
      "edge_kv_rows", n, static_cast<int>(t.extent(1)),
      KOKKOS_LAMBDA(const int i, const int j) { t(r0 + i, j) = f(i, j); });
}
}  // namespace

// Registration in forward order, source side first (Note [registration order], nn/parameters.hpp),
// so the backward, which ends with the source projections, reports ranges from the end.
template <class Scalar>
EdgeAttention<Scalar>::EdgeAttention(Store& store, Workspace<Scalar>& ws, const std::string& name, const Config& c)
    : config_(c),
      to_k_(store, ws, name + "/to_k", c.hidden, c.heads * c.head_dim, cap(c.max_src), Activation::identity,
            c.precision, false),
      to_v_(store, ws, name + "/to_v", c.hidden, c.heads * c.head_dim, cap(c.max_src), Activation::identity,
            c.precision),
      to_k_r_(c.has_r && !folds(c)
                  ? std::make_unique<Linear<Scalar>>(store, ws, name + "/to_k_r", c.hidden, c.heads * c.head_dim,
                                                     cap(c.max_edges), Activation::identity, c.precision, false)
                  : nullptr),
      to_v_r_(c.has_r && !folds(c)
                  ? std::make_unique<Linear<Scalar>>(store, ws, name + "/to_v_r", c.hidden, c.heads * c.head_dim,
                                                     cap(c.max_edges), Activation::identity, c.precision)
                  : nullptr),
      fold_(folds(c)),
      rel_(register_rel(store, name, c)),
      to_q_(store, ws, name + "/to_q", c.hidden, c.heads * c.head_dim, cap(c.max_dst), Activation::identity,
            c.precision),
      core_(ws, name + "/attn", c.heads, c.head_dim, c.max_edges, c.max_src, c.max_dst, c.precision,
            folds(c) ? c.hidden : 0),
      to_s_(store, ws, name + "/to_s", c.hidden, c.heads * c.head_dim, cap(c.max_dst), Activation::identity,
            c.precision),
      cat_(ws, name + "/cat", c.heads * c.head_dim, c.hidden, c.max_dst),
      to_g_(store, ws, name + "/to_g", c.heads * c.head_dim + c.hidden, c.heads * c.head_dim, cap(c.max_dst),
            Activation::identity, c.precision),
      to_out_(store, ws, name + "/to_out", c.heads * c.head_dim, c.hidden, cap(c.max_dst), Activation::identity,
              c.precision) {
  const int w = c.heads * c.head_dim;
  gate_ = &ws.request(name + "/gate", c.max_dst, w);
  u_ = &ws.request(name + "/u", c.max_dst, w);
  // Note [scratch units]: the backward's gradients live within one backward call, and the gate's
  // pre-activation only until blend_forward (the backward reads the gate itself).
  ws.to_scratch(to_g_.output());
  du_ = &ws.request_scratch(name + "/du", c.max_dst, w);
  dagg_ = &ws.request_scratch(name + "/dagg", c.max_dst, w);
  dgz_ = &ws.request_scratch(name + "/dgz", c.max_dst, w);
  dcat_ = &ws.request_scratch(name + "/dcat", c.max_dst, w + c.hidden);
  ds_ = &ws.request_scratch(name + "/ds", c.max_dst, w);
  dq_ = &ws.request_scratch(name + "/dq", c.max_dst, w);
  dk_ = &ws.request_scratch(name + "/dk", c.max_src, w);
  dv_ = &ws.request_scratch(name + "/dv", c.max_src, w);
  if (fold_ && !c.rel_scratch)
    own_scratch_ = RelScratch<Scalar>::request(ws, name + "/rel", c.max_dst,
                                               static_cast<std::int64_t>(c.heads) * c.hidden);
  scratch_ = c.rel_scratch ? c.rel_scratch : &own_scratch_;
}

// The folded layer's relative-position parameters, registered as Linear would register to_k_r
// (weight, no bias) and to_v_r (weight, bias): same names, shapes, initialisation and order.
template <class Scalar>
typename EdgeAttention<Scalar>::RelParams EdgeAttention<Scalar>::register_rel(Store& store, const std::string& name,
                                                                              const Config& c) {
  RelParams p;
  if (!folds(c)) return p;
  const auto o = static_cast<std::uint64_t>(c.heads * c.head_dim), i = static_cast<std::uint64_t>(c.hidden);
  p.wk = store.add(name + "/to_k_r/weight", {o, i}, Init::linear(i), true);
  p.wv = store.add(name + "/to_v_r/weight", {o, i}, Init::linear(i), true);
  p.bv = store.add(name + "/to_v_r/bias", {o}, Init::linear(i), false);
  return p;
}

template <class Scalar>
void EdgeAttention<Scalar>::bind(const Store& store) {
  to_k_.bind(store), to_v_.bind(store);
  if (to_k_r_) to_k_r_->bind(store), to_v_r_->bind(store);
  to_q_.bind(store), to_s_.bind(store), to_g_.bind(store), to_out_.bind(store);
  store_ = &store;
  if (fold_) {
    wk_ = store.matrix(rel_.wk), dwk_ = store.grad_matrix(rel_.wk);
    wv_ = store.matrix(rel_.wv), dwv_ = store.grad_matrix(rel_.wv);
    bv_ = store.vector(rel_.bv), dbv_ = store.grad_vector(rel_.bv);
  }
}

template <class Scalar>
void EdgeAttention<Scalar>::blend_forward(int n) {
  const auto agg = core_.output().matrix(), s = to_s_.output().matrix(), gz = to_g_.output().matrix();
  const auto g = gate_->matrix(), u = u_->matrix();
  for_each_cell(
      "edge_gate", n, config_.heads * config_.head_dim, KOKKOS_LAMBDA(const int i, const int j) {
        const Scalar gg = sigmoid(gz(i, j));
        g(i, j) = gg;
        u(i, j) = agg(i, j) + gg * (s(i, j) - agg(i, j));
      });
  round_values(config_.precision, u_->data(), static_cast<std::int64_t>(n) * config_.heads * config_.head_dim);
}

template <class Scalar>
void EdgeAttention<Scalar>::forward(const T& x_src, const T& x_dst, const T& r) {
  n_src_ = static_cast<int>(core_.sources());
  to_k_.forward(x_src, n_src_), to_v_.forward(x_src, n_src_);
  forward_cached(to_k_.output(), to_v_.output(), x_dst, r);
}

template <class Scalar>
void EdgeAttention<Scalar>::project_sources(const T& x_src, int n, const T& k, const T& v, std::int64_t row0) {
  if (n <= 0) return;
  to_k_.forward(x_src, n), to_v_.forward(x_src, n);
  copy_rows(to_k_.output(), k, n, row0), copy_rows(to_v_.output(), v, n, row0);
}

template <class Scalar>
void EdgeAttention<Scalar>::forward_cached(const T& k, const T& v, const T& x_dst, const T& r) {
  n_src_ = static_cast<int>(core_.sources()), n_dst_ = static_cast<int>(core_.destinations());
  const int n_edges = static_cast<int>(core_.edges());
  T kr, vr;
  if (to_k_r_) {
    to_k_r_->forward(r, n_edges), to_v_r_->forward(r, n_edges);
    kr = to_k_r_->output(), vr = to_v_r_->output();
  }
  to_q_.forward(x_dst, n_dst_);
  if (fold_) core_.forward_rel(to_q_.output(), k, v, r, wk_, wv_, bv_, *scratch_, norm_);
  else core_.forward(to_q_.output(), k, v, kr, vr);
  to_s_.forward(x_dst, n_dst_);
  cat_.forward(core_.output(), x_dst, n_dst_);
  to_g_.forward(cat_.output(), n_dst_);
  blend_forward(n_dst_);
  to_out_.forward(*u_, n_dst_);
}

template <class Scalar>
void EdgeAttention<Scalar>::blend_backward(const T& du, int n) {
  const auto agg = core_.output().matrix(), s = to_s_.output().matrix(), g = gate_->matrix();
  const auto d = du.matrix(), dagg = dagg_->matrix(), ds = ds_->matrix(), dgz = dgz_->matrix();
  for_each_cell(
      "edge_gate_bw", n, config_.heads * config_.head_dim, KOKKOS_LAMBDA(const int i, const int j) {
        const Scalar gg = g(i, j), dd = d(i, j);
        dagg(i, j) = dd * (Scalar(1) - gg);
        ds(i, j) = dd * gg;
        dgz(i, j) = dd * (s(i, j) - agg(i, j)) * gg * (Scalar(1) - gg);
      });
  const std::int64_t span = static_cast<std::int64_t>(n) * config_.heads * config_.head_dim;
  round_values(config_.precision, dagg_->data(), span);
  round_values(config_.precision, ds_->data(), span);
  round_values(config_.precision, dgz_->data(), span);
}

template <class Scalar>
void EdgeAttention<Scalar>::backward(const T& x_src, const T& x_dst, const T& r, const T& dy, const T& dx_src,
                                     GradMode mode_src, const T& dx_dst, GradMode mode_dst, const T& dr,
                                     GradMode mode_r) {
  const int n_edges = static_cast<int>(core_.edges());
  const GradMode acc = GradMode::accumulate;
  to_out_.backward(*u_, dy, *du_, GradMode::assign, n_dst_);
  blend_backward(*du_, n_dst_);
  // Destination side first (Note [self-attention gradients]).
  to_g_.backward(cat_.output(), *dgz_, *dcat_, GradMode::assign, n_dst_);
  cat_.backward(*dcat_, *dagg_, acc, dx_dst, mode_dst, n_dst_);
  to_s_.backward(x_dst, *ds_, dx_dst, acc, n_dst_);
  if (fold_) {
    core_.backward_rel(to_q_.output(), to_k_.output(), to_v_.output(), r, wk_, wv_, bv_, *dagg_, *dq_,
                       GradMode::assign, *dk_, *dv_, dr, mode_r, dwk_, dwv_, dbv_, *scratch_, norm_);
    to_q_.backward(x_dst, *dq_, dx_dst, acc, n_dst_);
    store_->report_ready(rel_.wv, rel_.bv);  // as to_v_r's and to_k_r's Linear::backward would
    store_->report_ready(rel_.wk, rel_.wk);
    to_v_.backward(x_src, *dv_, dx_src, mode_src, n_src_);
    to_k_.backward(x_src, *dk_, dx_src, acc, n_src_);
    return;
  }
  T kr, vr;
  if (to_k_r_) kr = to_k_r_->output(), vr = to_v_r_->output();
  core_.backward(to_q_.output(), to_k_.output(), to_v_.output(), kr, vr, *dagg_, *dq_, GradMode::assign, *dk_,
                 *dv_);
  to_q_.backward(x_dst, *dq_, dx_dst, acc, n_dst_);
  if (to_k_r_) {
    to_v_r_->backward(r, core_.dv_edge(), dr, mode_r, n_edges);
    to_k_r_->backward(r, core_.dk_edge(), dr, acc, n_edges);
  }
  to_v_.backward(x_src, *dv_, dx_src, mode_src, n_src_);
  to_k_.backward(x_src, *dk_, dx_src, acc, n_src_);
}

template class EdgeAttention<float>;
template class EdgeAttention<double>;

}  // namespace hpct::nn
