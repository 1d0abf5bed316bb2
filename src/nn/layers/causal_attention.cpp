// CausalAttention: projections around EdgeSoftmax over causal edges (see causal_attention.hpp).
#include "nn/layers/causal_attention.hpp"

#include "core/error.hpp"

namespace hpct::nn {

template <class Scalar>
CausalAttention<Scalar>::CausalAttention(Store& store, Workspace<Scalar>& ws, const std::string& name, int dim,
                                         int heads, int seq_len, int max_sequences, Precision precision)
    : dim_(dim),
      seq_len_(seq_len),
      max_sequences_(max_sequences),
      edges_per_sequence_(seq_len * (seq_len + 1) / 2),
      to_q_(store, ws, name + "/to_q", dim, dim, max_sequences * seq_len, Activation::identity, precision),
      // No key bias: it would add the same q . b to every score of a query (Note in edge_attention.hpp).
      to_k_(store, ws, name + "/to_k", dim, dim, max_sequences * seq_len, Activation::identity, precision, false),
      to_v_(store, ws, name + "/to_v", dim, dim, max_sequences * seq_len, Activation::identity, precision),
      core_(ws, name + "/attn", heads, dim / heads,
            static_cast<std::int64_t>(max_sequences) * seq_len * (seq_len + 1) / 2,
            static_cast<std::int64_t>(max_sequences) * seq_len, static_cast<std::int64_t>(max_sequences) * seq_len,
            precision),
      to_out_(store, ws, name + "/to_out", dim, dim, max_sequences * seq_len, Activation::identity, precision) {
  if (heads <= 0 || dim % heads != 0)
    throw Error("internal: causal attention " + name + ": dim " + std::to_string(dim) + " is not a multiple of " +
                std::to_string(heads) + " heads");
  // Sequence-major, then destination, then source: the first n sequences' edges are a prefix.
  for (int s = 0; s < max_sequences; ++s)
    for (int i = 0; i < seq_len; ++i)
      for (int j = 0; j <= i; ++j) src_.push_back(s * seq_len + j), dst_.push_back(s * seq_len + i);
  const std::int64_t rows = static_cast<std::int64_t>(max_sequences) * seq_len;
  dq_ = &ws.request(name + "/dq", rows, dim);
  dk_ = &ws.request(name + "/dk", rows, dim);
  dv_ = &ws.request(name + "/dv", rows, dim);
  dagg_ = &ws.request(name + "/dagg", rows, dim);
}

template <class Scalar>
void CausalAttention<Scalar>::bind(const Store& store) {
  to_q_.bind(store), to_k_.bind(store), to_v_.bind(store), to_out_.bind(store);
}

template <class Scalar>
Tensor<Scalar> CausalAttention<Scalar>::tokens(const T& t) const {
  return T(t.data(), Shape{t.shape().size() / dim_, dim_});
}

template <class Scalar>
void CausalAttention<Scalar>::set_sequences(int n) {
  if (n == current_n_) return;
  if (n < 0 || n > max_sequences_)
    throw Error("internal: causal attention: " + std::to_string(n) + " sequences exceed the capacity " +
                std::to_string(max_sequences_));
  const std::int64_t rows = static_cast<std::int64_t>(n) * seq_len_;
  core_.set_edges(src_.data(), dst_.data(), static_cast<std::int64_t>(n) * edges_per_sequence_, rows, rows);
  current_n_ = n;
}

template <class Scalar>
void CausalAttention<Scalar>::forward(const T& x, int n) {
  set_sequences(n);
  const T xt = tokens(x);
  const int rows = n * seq_len_;
  to_q_.forward(xt, rows), to_k_.forward(xt, rows), to_v_.forward(xt, rows);
  core_.forward(to_q_.output(), to_k_.output(), to_v_.output(), T(), T());
  to_out_.forward(core_.output(), rows);
  y_ = T(to_out_.output().data(), Shape{max_sequences_, seq_len_, dim_});
}

template <class Scalar>
void CausalAttention<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  const T xt = tokens(x), dxt = dx.empty() ? T() : tokens(dx);
  const int rows = n * seq_len_;
  to_out_.backward(core_.output(), tokens(dy), *dagg_, GradMode::assign, rows);
  core_.backward(to_q_.output(), to_k_.output(), to_v_.output(), T(), T(), *dagg_, *dq_, GradMode::assign, *dk_,
                 *dv_);
  to_v_.backward(xt, *dv_, dxt, mode, rows);
  to_k_.backward(xt, *dk_, dxt, GradMode::accumulate, rows);
  to_q_.backward(xt, *dq_, dxt, GradMode::accumulate, rows);
}

template class CausalAttention<float>;
template class CausalAttention<double>;

}  // namespace hpct::nn
