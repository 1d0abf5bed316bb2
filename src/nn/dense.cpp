#include "nn/dense.hpp"

#include <KokkosBlas3_gemm.hpp>

namespace hpct::nn {

namespace {
using Grid2 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>;

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
}

template <class Scalar>
void Dense<Scalar>::forward(const Matrix& x, int n) {
  if (n == 0) return;
  Matrix target = act_ == Activation::identity ? y_ : z_;
  KokkosBlas::gemm("N", "T", Scalar(1), rows(x, n), w_, Scalar(0), rows(target, n));
  const auto b = b_;
  const auto z = z_;
  const auto y = y_;
  const Activation act = act_;
  const Grid2 grid({0, 0}, {n, out_});
  if (act == Activation::identity) {
    Kokkos::parallel_for("dense_bias", grid, KOKKOS_LAMBDA(const int i, const int j) { y(i, j) += b(j); });
  } else if (act == Activation::silu) {
    // SiLU caches sigmoid(z) instead of z: backward needs only s and y (silu' = s + y (1 - s)).
    Kokkos::parallel_for(
        "dense_bias_silu", grid, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = z(i, j) + b(j);
          const Scalar sg = Scalar(1) / (Scalar(1) + kmath::exp(-zz));
          z(i, j) = sg;
          y(i, j) = zz * sg;
        });
  } else {
    Kokkos::parallel_for(
        "dense_bias_act", grid, KOKKOS_LAMBDA(const int i, const int j) {
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
  const Grid2 grid({0, 0}, {n, out});
  const auto z = z_;
  if (act_ == Activation::silu) {
    const auto y = y_;
    Kokkos::parallel_for(
        "dense_silu_grad", grid, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar sg = z(i, j);
          dy(i, j) *= sg + y(i, j) * (Scalar(1) - sg);
        });
  } else if (act_ != Activation::identity) {
    const Activation act = act_;
    Kokkos::parallel_for(
        "dense_act_grad", grid, KOKKOS_LAMBDA(const int i, const int j) { dy(i, j) *= activate_grad(act, z(i, j)); });
  }
  // db += column sums of dz; one thread per output column keeps the sum order fixed (deterministic).
  const auto db = db_;
  Kokkos::parallel_for(
      "dense_bias_grad", Kokkos::RangePolicy<ExecSpace>(0, out), KOKKOS_LAMBDA(const int j) {
        Scalar s = 0;
        for (int i = 0; i < n; ++i) s += dy(i, j);
        db(j) += s;
      });
  // dW += dz^T x ; dx = dz W
  KokkosBlas::gemm("T", "N", Scalar(1), rows(dy, n), rows(x, n), Scalar(1), dw_);
  if (dx.extent(0) > 0) KokkosBlas::gemm("N", "N", Scalar(1), rows(dy, n), w_, Scalar(0), rows(dx, n));
}

template class Dense<float>;
template class Dense<double>;

}  // namespace hpct::nn
