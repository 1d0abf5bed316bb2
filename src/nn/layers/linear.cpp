// Linear layer kernels (see linear.hpp).
#include "nn/layers/linear.hpp"

#include "nn/elementwise.hpp"
#include "nn/gemm.hpp"

namespace hpct::nn {

template <class Scalar>
Linear<Scalar>::Linear(Store& store, Workspace<Scalar>& ws, const std::string& name, int in, int out, int capacity,
                       Activation act, Precision precision, bool bias)
    : in_(in), out_(out), act_(act), precision_(precision), has_bias_(bias) {
  const auto o = static_cast<std::uint64_t>(out), i = static_cast<std::uint64_t>(in);
  w_index_ = store.add(name + "/weight", {o, i}, Init::linear(i), true);
  b_index_ = bias ? store.add(name + "/bias", {o}, Init::linear(i), false) : w_index_;
  if (act_ != Activation::identity) {
    z_ = &ws.request(name + "/z", capacity, out);
    dz_ = &ws.request(name + "/dz", capacity, out);
  }
  y_ = &ws.request(name + "/y", capacity, out);
  ones_ = &ws.request(name + "/ones", capacity, 1);
}

template <class Scalar>
void Linear<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.matrix(w_index_);
  dw_ = store.grad_matrix(w_index_);
  if (has_bias_) {
    b_ = store.vector(b_index_);
    db_ = store.grad_vector(b_index_);
  }
  const auto ones = ones_->flat();
  Kokkos::parallel_for(
      "linear_ones", range(0, ones.extent(0)), KOKKOS_LAMBDA(const std::size_t i) { ones(i) = Scalar(1); });
  if (precision_ != Precision::fp32) w_lowp_ = View2<Scalar>("linear_w_lowp", out_, in_);
}

template <class Scalar>
void Linear<Scalar>::forward(const T& x, int n) {
  if (n == 0) return;
  typename T::Matrix w = w_;
  if (precision_ != Precision::fp32) {
    Kokkos::deep_copy(w_lowp_, w_);
    round_values(precision_, w_lowp_.data(), static_cast<std::int64_t>(w_lowp_.span()));
    w = w_lowp_;
  }
  const T& target = act_ == Activation::identity ? *y_ : *z_;
  gemm('N', 'T', Scalar(1), x.rows(n), w, Scalar(0), target.rows(n));
  const auto b = b_;
  const auto y = y_->matrix();
  const Activation act = act_;
  const int out = out_;
  const bool has_bias = has_bias_;
  if (act == Activation::identity && !has_bias) {
    // y already holds x W^T.
  } else if (act == Activation::identity) {
    for_each_cell(
        "linear_bias", n, out, KOKKOS_LAMBDA(const int i, const int j) { y(i, j) += b(j); });
  } else if (act == Activation::silu) {
    const auto z = z_->matrix();
    for_each_cell(
        "linear_silu", n, out, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = has_bias ? z(i, j) + b(j) : z(i, j);
          const Scalar sg = sigmoid(zz);
          z(i, j) = sg;
          y(i, j) = zz * sg;
        });
  } else {
    const auto z = z_->matrix();
    for_each_cell(
        "linear_act", n, out, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = has_bias ? z(i, j) + b(j) : z(i, j);
          z(i, j) = zz;
          y(i, j) = activate(act, zz);
        });
  }
  if (precision_ != Precision::fp32) {
    round_values(precision_, y_->data(), static_cast<std::int64_t>(n) * out);
    if (z_) round_values(precision_, z_->data(), static_cast<std::int64_t>(n) * out);
  }
}

template <class Scalar>
void Linear<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  if (n > 0) {
    const int out = out_;
    typename T::Matrix dz = dy.rows(n);
    if (act_ == Activation::silu) {
      const auto s = z_->matrix(), y = y_->matrix(), d = dz_->matrix(), g = dy.matrix();
      for_each_cell(
          "linear_silu_bw", n, out, KOKKOS_LAMBDA(const int i, const int j) {
            const Scalar sg = s(i, j);
            d(i, j) = g(i, j) * (sg + y(i, j) * (Scalar(1) - sg));
          });
      dz = dz_->rows(n);
    } else if (act_ != Activation::identity) {
      const Activation act = act_;
      const auto z = z_->matrix(), d = dz_->matrix(), g = dy.matrix();
      for_each_cell(
          "linear_act_bw", n, out,
          KOKKOS_LAMBDA(const int i, const int j) { d(i, j) = g(i, j) * activate_grad(act, z(i, j)); });
      dz = dz_->rows(n);
    }
    if (act_ != Activation::identity && precision_ != Precision::fp32)
      round_values(precision_, dz_->data(), static_cast<std::int64_t>(n) * out);
    // db [1, out] += 1 [1, n] dz [n, out]: a GEMM, so it reaches the BLAS library (KokkosBlas'
    // transposed gemv on LayoutRight does not); fixed summation order, so deterministic.
    if (has_bias_) {
      const typename Store::Matrix db_row(db_.data(), 1, static_cast<std::size_t>(out));
      const typename Store::Matrix ones_row(ones_->data(), 1, static_cast<std::size_t>(n));
      gemm('N', 'N', Scalar(1), ones_row, dz, Scalar(1), db_row);
    }
    gemm('T', 'N', Scalar(1), dz, x.rows(n), Scalar(1), dw_);  // dW += dz^T x
    if (!dx.empty()) {
      const typename T::Matrix w = precision_ != Precision::fp32 ? typename T::Matrix(w_lowp_) : w_;
      gemm('N', 'N', Scalar(1), dz, w, mode == GradMode::accumulate ? Scalar(1) : Scalar(0), dx.rows(n));
      if (precision_ != Precision::fp32) round_values(precision_, dx.data(), static_cast<std::int64_t>(n) * in_);
    }
  }
  store_->report_ready(w_index_, b_index_);
}

template class Linear<float>;
template class Linear<double>;

}  // namespace hpct::nn
