#include "nn/dense.hpp"

#include "nn/gemm.hpp"

#include "nn/elementwise.hpp"

namespace hpct::nn {

namespace {
template <class V>
auto rows(const V& v, int n) {
  return Kokkos::subview(v, Kokkos::make_pair(0, n), Kokkos::ALL());
}
}  // namespace

template <class Scalar>
Dense<Scalar>::Dense(Store& store, const std::string& name, int in, int out, Activation act)
    : in_(in), out_(out), act_(act) {
  w_index_ = store.add(name + "/weight", {static_cast<std::uint64_t>(out), static_cast<std::uint64_t>(in)},
                       static_cast<std::uint64_t>(in));
  b_index_ = store.add(name + "/bias", {static_cast<std::uint64_t>(out)}, static_cast<std::uint64_t>(in));
}

template <class Scalar>
void Dense<Scalar>::bind(const Store& store, int capacity) {
  w_ = store.matrix(w_index_);
  dw_ = store.grad_matrix(w_index_);
  b_ = store.vector(b_index_);
  db_ = store.grad_vector(b_index_);
  if (act_ != Activation::identity) z_ = Matrix("dense_z", capacity, out_);
  y_ = Matrix("dense_y", capacity, out_);
  ones_ = decltype(ones_)("dense_ones", capacity);
  Kokkos::deep_copy(ones_, Scalar(1));
}

template <class Scalar>
void Dense<Scalar>::forward(const Matrix& x, int n) {
  if (n == 0) return;
  Matrix target = act_ == Activation::identity ? y_ : z_;
  gemm('N', 'T', Scalar(1), rows(x, n), w_, Scalar(0), rows(target, n));
  const auto b = b_;
  const auto z = z_;
  const auto y = y_;
  const Activation act = act_;
  const int out = out_;
  if (act == Activation::identity) {
    for_each_cell("dense_bias", n, out, KOKKOS_LAMBDA(const int i, const int j) { y(i, j) += b(j); });
  } else if (act == Activation::silu) {
    // SiLU caches sigmoid(z) instead of z: backward needs only s and y (silu' = s + y (1 - s)).
    for_each_cell(
        "dense_bias_silu", n, out, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = z(i, j) + b(j);
          const Scalar sg = sigmoid(zz);
          z(i, j) = sg;
          y(i, j) = zz * sg;
        });
  } else {
    for_each_cell(
        "dense_bias_act", n, out, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = z(i, j) + b(j);
          z(i, j) = zz;
          y(i, j) = activate(act, zz);
        });
  }
}

template <class Scalar>
void Dense<Scalar>::backward(const Matrix& x, const Matrix& dy, const Matrix& dx, int n) {
  if (n == 0) return;
  const int out = out_;
  const auto z = z_;
  if (act_ == Activation::silu) {
    const auto y = y_;
    for_each_cell(
        "dense_silu_grad", n, out, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar sg = z(i, j);
          dy(i, j) *= sg + y(i, j) * (Scalar(1) - sg);
        });
  } else if (act_ != Activation::identity) {
    const Activation act = act_;
    for_each_cell(
        "dense_act_grad", n, out, KOKKOS_LAMBDA(const int i, const int j) { dy(i, j) *= activate_grad(act, z(i, j)); });
  }
  // db [1, out] += 1 [1, n] dz [n, out]: a GEMM, so it reaches the BLAS TPL (KokkosBlas' transposed
  // gemv on LayoutRight does not); fixed summation order, so deterministic.
  const typename Store::Matrix db_row(db_.data(), 1, out);
  const typename Store::Matrix ones_row(ones_.data(), 1, n);
  gemm('N', 'N', Scalar(1), ones_row, rows(dy, n), Scalar(1), db_row);
  // dW += dz^T x ; dx = dz W
  gemm('T', 'N', Scalar(1), rows(dy, n), rows(x, n), Scalar(1), dw_);
  if (dx.extent(0) > 0) gemm('N', 'N', Scalar(1), rows(dy, n), w_, Scalar(0), rows(dx, n));
}

template class Dense<float>;
template class Dense<double>;

}  // namespace hpct::nn
