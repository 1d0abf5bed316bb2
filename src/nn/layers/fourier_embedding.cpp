// FourierEmbedding: features, per-input MLPs, their sum and the output MLP (see fourier_embedding.hpp).
#include "nn/layers/fourier_embedding.hpp"

#include "nn/elementwise.hpp"

namespace hpct::nn {

template <class Scalar>
FourierEmbedding<Scalar>::FourierEmbedding(Store& store, Workspace<Scalar>& ws, const std::string& name, int inputs,
                                           int hidden, int freqs, int capacity, Precision precision)
    : inputs_(inputs), hidden_(hidden), features_(store, ws, name + "/freqs", inputs, freqs, capacity, precision) {
  // Registration in forward order (Note [registration order], nn/parameters.hpp): features, the
  // MLPs, then the output MLP, so the backward reports its ranges from the end of the buffer.
  for (int c = 0; c < inputs; ++c) {
    const std::string p = name + "/mlps." + std::to_string(c);
    Mlp m;
    m.in = std::make_unique<Linear<Scalar>>(store, ws, p + ".0", features_.width(), hidden, capacity,
                                            Activation::identity, precision);
    // mlps.<c>.2, the ReLU, is fused into the LayerNorm (Note [layer norm with relu]).
    m.norm = std::make_unique<LayerNorm<Scalar>>(store, ws, p + ".1", Shape{capacity, hidden}, 1e-5, precision);
    m.norm->fuse_relu();
    m.out = std::make_unique<Linear<Scalar>>(store, ws, p + ".3", hidden, hidden, capacity, Activation::identity,
                                             precision);
    mlps_.push_back(std::move(m));
  }
  out_norm_ = std::make_unique<LayerNorm<Scalar>>(store, ws, name + "/to_out.0", Shape{capacity, hidden}, 1e-5,
                                                  precision);
  out_norm_->fuse_relu();  // to_out.1
  out_ = std::make_unique<Linear<Scalar>>(store, ws, name + "/to_out.2", hidden, hidden, capacity,
                                          Activation::identity, precision);
  sum_ = &ws.request(name + "/sum", capacity, hidden);
  // Note [scratch units]: the backward's gradients live within one backward call, and each input
  // MLP's output only until sum_mlps.
  dsum_ = &ws.request_scratch(name + "/dsum", capacity, hidden);
  dfeat_ = &ws.request_scratch(name + "/dfeat", features_.output().shape());
  da_ = &ws.request_scratch(name + "/da", capacity, hidden);
  db_ = &ws.request_scratch(name + "/db", capacity, hidden);
  for (const Mlp& m : mlps_) ws.to_scratch(m.out->output());
}

template <class Scalar>
void FourierEmbedding<Scalar>::bind(const Store& store) {
  features_.bind(store);
  for (Mlp& m : mlps_) m.in->bind(store), m.norm->bind(store), m.out->bind(store);
  out_norm_->bind(store);
  out_->bind(store);
}

template <class Scalar>
void FourierEmbedding<Scalar>::sum_mlps(const T& extra, int n) {
  const auto s = sum_->matrix();
  const bool has_extra = !extra.empty();
  const auto e = has_extra ? extra.matrix() : s;
  for_each_cell(
      "fourier_sum0", n, hidden_,
      KOKKOS_LAMBDA(const int i, const int j) { s(i, j) = has_extra ? e(i, j) : Scalar(0); });
  // Input order, one input at a time: a fixed summation order.
  for (const Mlp& m : mlps_) {
    const auto y = m.out->output().matrix();
    for_each_cell(
        "fourier_sum", n, hidden_, KOKKOS_LAMBDA(const int i, const int j) { s(i, j) += y(i, j); });
  }
}

template <class Scalar>
void FourierEmbedding<Scalar>::forward(const T& x, int n, const T& extra) {
  features_.forward(x, n);
  for (int c = 0; c < inputs_; ++c) {
    Mlp& m = mlps_[static_cast<std::size_t>(c)];
    m.in->forward(features_.block(c), n);
    m.norm->forward(m.in->output(), n);
    m.out->forward(m.norm->output(), n);
  }
  sum_mlps(extra, n);
  out_norm_->forward(*sum_, n);
  out_->forward(out_norm_->output(), n);
}

template <class Scalar>
void FourierEmbedding<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  const GradMode assign = GradMode::assign;
  out_->backward(out_norm_->output(), dy, *da_, assign, n);
  out_norm_->backward(*sum_, *da_, *dsum_, assign, n);
  for (int c = inputs_ - 1; c >= 0; --c) {
    Mlp& m = mlps_[static_cast<std::size_t>(c)];
    m.out->backward(m.norm->output(), *dsum_, *da_, assign, n);
    m.norm->backward(m.in->output(), *da_, *db_, assign, n);
    m.in->backward(features_.block(c), *db_, features_.block_of(*dfeat_, c), assign, n);
  }
  features_.backward(x, *dfeat_, dx, mode, n);
}

template class FourierEmbedding<float>;
template class FourierEmbedding<double>;

}  // namespace hpct::nn
