// CausalAttention: projections around batched GEMMs and fused causal softmax rows (see
// causal_attention.hpp, Note [dense causal attention]).
#include "nn/layers/causal_attention.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/vector_math.hpp"
#include "nn/gemm_batched.hpp"

namespace hpct::nn {

template <class Scalar>
CausalAttention<Scalar>::CausalAttention(Store& store, Workspace<Scalar>& ws, const std::string& name, int dim,
                                         int heads, int seq_len, int max_sequences, Precision precision)
    : dim_(dim),
      heads_(heads),
      head_dim_(heads > 0 ? dim / heads : 0),
      seq_len_(seq_len),
      max_sequences_(max_sequences),
      precision_(precision),
      to_q_(store, ws, name + "/to_q", dim, dim, max_sequences * seq_len, Activation::identity, precision),
      // No key bias: it would add the same q . b to every score of a query (Note in edge_attention.hpp).
      to_k_(store, ws, name + "/to_k", dim, dim, max_sequences * seq_len, Activation::identity, precision, false),
      to_v_(store, ws, name + "/to_v", dim, dim, max_sequences * seq_len, Activation::identity, precision),
      to_out_(store, ws, name + "/to_out", dim, dim, max_sequences * seq_len, Activation::identity, precision) {
  if (heads <= 0 || dim % heads != 0)
    throw Error("internal: causal attention " + name + ": dim " + std::to_string(dim) + " is not a multiple of " +
                std::to_string(heads) + " heads");
  const std::int64_t rows = static_cast<std::int64_t>(max_sequences) * seq_len;
  p_ = &ws.request(name + "/p", rows * heads, seq_len);
  dp_ = &ws.request(name + "/dp", rows * heads, seq_len);
  att_ = &ws.request(name + "/att", rows, dim);
  dq_ = &ws.request(name + "/dq", rows, dim);
  dk_ = &ws.request(name + "/dk", rows, dim);
  dv_ = &ws.request(name + "/dv", rows, dim);
  datt_ = &ws.request(name + "/datt", rows, dim);
}

template <class Scalar>
void CausalAttention<Scalar>::bind(const Store& store) {
  to_q_.bind(store), to_k_.bind(store), to_v_.bind(store), to_out_.bind(store);
}

template <class Scalar>
Tensor<Scalar> CausalAttention<Scalar>::tokens(const T& t) const {
  return T(t.data(), Shape{t.shape().size() / dim_, dim_});
}

namespace {
// A head's [L, d] block of a [N * L, D] tensor: (sequence, head) = (outer, inner).
template <class S>
Strided<S> heads_of(S* data, int L, int D, int d) {
  return Strided<S>{data, D, static_cast<std::int64_t>(L) * D, d};
}
// A (sequence, head)'s [L, L] block of P or dP.
template <class S>
Strided<S> squares_of(S* data, int L, int heads) {
  const std::int64_t sq = static_cast<std::int64_t>(L) * L;
  return Strided<S>{data, L, sq * heads, sq};
}
}  // namespace

template <class Scalar>
void CausalAttention<Scalar>::softmax_rows(int n) {
  const auto p = p_->matrix();
  const int L = seq_len_;
  // Row r = ((s * heads + h) * L + i): the causal softmax over columns 0..i, zeros beyond.
  Kokkos::parallel_for(
      "causal_softmax", range(0, n * heads_ * L), KOKKOS_LAMBDA(const int r) {
        const int i = r % L;
        Scalar m = p(r, 0);
        for (int j = 1; j <= i; ++j) m = p(r, j) > m ? p(r, j) : m;
        Scalar sum = Scalar(0);
        for (int j = 0; j <= i; ++j) {
          const Scalar e = exp_vectorisable(p(r, j) - m);
          p(r, j) = e;
          sum += e;
        }
        const Scalar inv = Scalar(1) / sum;
        for (int j = 0; j <= i; ++j) p(r, j) *= inv;
        for (int j = i + 1; j < L; ++j) p(r, j) = Scalar(0);
      });
}

template <class Scalar>
void CausalAttention<Scalar>::softmax_grad_rows(int n) {
  const auto p = p_->matrix(), dp = dp_->matrix();
  const int L = seq_len_;
  const Scalar scale = Scalar(1) / static_cast<Scalar>(std::sqrt(static_cast<double>(head_dim_)));
  // dS = scale * P * (dP - sum_j P dP) on the causal part, 0 above the diagonal (P is 0 there).
  Kokkos::parallel_for(
      "causal_smax_bw", range(0, n * heads_ * L), KOKKOS_LAMBDA(const int r) {
        const int i = r % L;
        Scalar dot = Scalar(0);
        for (int j = 0; j <= i; ++j) dot += p(r, j) * dp(r, j);
        for (int j = 0; j <= i; ++j) dp(r, j) = scale * p(r, j) * (dp(r, j) - dot);
        for (int j = i + 1; j < L; ++j) dp(r, j) = Scalar(0);
      });
}

template <class Scalar>
void CausalAttention<Scalar>::forward(const T& x, int n) {
  if (n < 0 || n > max_sequences_)
    throw Error("internal: causal attention: " + std::to_string(n) + " sequences exceed the capacity " +
                std::to_string(max_sequences_));
  const T xt = tokens(x);
  const int rows = n * seq_len_, L = seq_len_, D = dim_, d = head_dim_, H = heads_;
  to_q_.forward(xt, rows), to_k_.forward(xt, rows), to_v_.forward(xt, rows);
  const Scalar scale = Scalar(1) / static_cast<Scalar>(std::sqrt(static_cast<double>(d)));
  using C = const Scalar;
  // Note [dense causal attention]: S = scale Q K^T, P = causal softmax(S), att = P V.
  gemm_batched<Scalar>('N', 'T', L, L, d, scale, heads_of<C>(to_q_.output().data(), L, D, d),
                       heads_of<C>(to_k_.output().data(), L, D, d), Scalar(0), squares_of(p_->data(), L, H), n, H);
  softmax_rows(n);
  gemm_batched<Scalar>('N', 'N', L, d, L, Scalar(1), squares_of<C>(p_->data(), L, H),
                       heads_of<C>(to_v_.output().data(), L, D, d), Scalar(0), heads_of(att_->data(), L, D, d), n,
                       H);
  round_values(precision_, att_->data(), static_cast<std::int64_t>(rows) * D);
  to_out_.forward(*att_, rows);
  y_ = T(to_out_.output().data(), Shape{max_sequences_, seq_len_, dim_});
}

template <class Scalar>
void CausalAttention<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  const T xt = tokens(x), dxt = dx.empty() ? T() : tokens(dx);
  const int rows = n * seq_len_, L = seq_len_, D = dim_, d = head_dim_, H = heads_;
  using C = const Scalar;
  to_out_.backward(*att_, tokens(dy), *datt_, GradMode::assign, rows);
  const auto q = heads_of<C>(to_q_.output().data(), L, D, d), k = heads_of<C>(to_k_.output().data(), L, D, d),
             v = heads_of<C>(to_v_.output().data(), L, D, d), g = heads_of<C>(datt_->data(), L, D, d);
  const auto p = squares_of<C>(p_->data(), L, H), ds = squares_of<C>(dp_->data(), L, H);
  gemm_batched<Scalar>('N', 'T', L, L, d, Scalar(1), g, v, Scalar(0), squares_of(dp_->data(), L, H), n, H);  // dP
  softmax_grad_rows(n);                                                                                      // dS
  gemm_batched<Scalar>('N', 'N', L, d, L, Scalar(1), ds, k, Scalar(0), heads_of(dq_->data(), L, D, d), n, H);
  gemm_batched<Scalar>('T', 'N', L, d, L, Scalar(1), ds, q, Scalar(0), heads_of(dk_->data(), L, D, d), n, H);
  gemm_batched<Scalar>('T', 'N', L, d, L, Scalar(1), p, g, Scalar(0), heads_of(dv_->data(), L, D, d), n, H);
  const std::int64_t span = static_cast<std::int64_t>(rows) * D;
  round_values(precision_, dq_->data(), span);
  round_values(precision_, dk_->data(), span);
  round_values(precision_, dv_->data(), span);
  to_v_.backward(xt, *dv_, dxt, mode, rows);
  to_k_.backward(xt, *dk_, dxt, GradMode::accumulate, rows);
  to_q_.backward(xt, *dq_, dxt, GradMode::accumulate, rows);
}

template class CausalAttention<float>;
template class CausalAttention<double>;

}  // namespace hpct::nn
