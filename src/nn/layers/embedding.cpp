// Embedding kernels (see embedding.hpp).
#include "nn/layers/embedding.hpp"

#include "core/error.hpp"
#include "nn/elementwise.hpp"

namespace hpct::nn {

namespace {
Shape embedded_shape(const Shape& index_shape, int dim, const std::string& name) {
  if (index_shape.rank < 1 || index_shape.rank > 3)
    throw Error("internal: Embedding " + name + " takes indices of rank 1 to 3, got " + index_shape.to_string());
  Shape s = index_shape;
  s.dim[static_cast<std::size_t>(s.rank++)] = dim;
  return s;
}

template <class Scalar>
KOKKOS_INLINE_FUNCTION int row_of(Scalar v, int num) {
  const int r = static_cast<int>(v);
  return r < 0 ? 0 : (r >= num ? num - 1 : r);
}
}  // namespace

template <class Scalar>
Embedding<Scalar>::Embedding(Store& store, Workspace<Scalar>& ws, const std::string& name, int num, int dim,
                             const Shape& index_shape, Precision precision)
    : num_(num), dim_(dim), precision_(precision), groups_(name, index_shape.size(), num) {
  w_index_ = store.add(name + "/weight", {static_cast<std::uint64_t>(num), static_cast<std::uint64_t>(dim)},
                       Init::normal_std(1.0), true);
  y_ = &ws.request(name + "/y", embedded_shape(index_shape, dim, name));
}

template <class Scalar>
void Embedding<Scalar>::bind(const Store& store) {
  store_ = &store;
  w_ = store.matrix(w_index_), dw_ = store.grad_matrix(w_index_);
}

template <class Scalar>
void Embedding<Scalar>::forward(const T& x, int n) {
  const auto idx = x.flat();
  const int positions = static_cast<int>(n * x.cols()), num = num_;
  const auto w = w_;
  const typename T::Matrix y(y_->data(), static_cast<std::size_t>(positions), static_cast<std::size_t>(dim_));
  for_each_cell(
      "embedding_fw", positions, dim_,
      KOKKOS_LAMBDA(const int p, const int j) { y(p, j) = w(row_of(idx(p), num), j); });
  round_values(precision_, y_->data(), static_cast<std::int64_t>(y.span()));
}

template <class Scalar>
void Embedding<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  const std::int64_t positions = n * x.cols();
  if (positions > 0) {
    const auto idx = x.flat();
    const auto keys = groups_.keys();
    const int num = num_;
    Kokkos::parallel_for(
        "embedding_keys", range(0, positions),
        KOKKOS_LAMBDA(const std::int64_t p) { keys(p) = row_of(idx(p), num); });
    groups_.group_on_device(positions, num_);  // the keys are clamped rows: always valid
    // One work item per (table row, feature): the row's positions in ascending order; rows no
    // position uses are left alone.
    const auto offsets = groups_.offsets(), order = groups_.order();
    const auto dw = dw_;
    const typename T::Matrix g(dy.data(), static_cast<std::size_t>(positions), static_cast<std::size_t>(dim_));
    for_each_cell(
        "embedding_bw", num_, dim_, KOKKOS_LAMBDA(const int r, const int j) {
          const int first = offsets(r), last = offsets(r + 1);
          if (first == last) return;
          Scalar s = Scalar(0);
          for (int o = first; o < last; ++o) s += g(order(o), j);
          dw(r, j) += s;
        });
  }
  if (!dx.empty() && mode == GradMode::assign) {
    const auto d = dx.flat();
    Kokkos::parallel_for(
        "embedding_dx", range(0, positions), KOKKOS_LAMBDA(const std::int64_t p) { d(p) = Scalar(0); });
  }
  store_->report_ready(w_index_, w_index_);
}

template <class Scalar>
long long Embedding<Scalar>::first_bad_index(const T& x, int n) const {
  const long long positions = n * x.cols();
  if (positions == 0) return -1;
  const auto idx = x.flat();
  const int num = num_;
  long long first = positions;
  Kokkos::parallel_reduce(
      "embedding_check", range(0, positions),
      KOKKOS_LAMBDA(const long long p, long long& f) {
        const Scalar v = idx(p);
        const bool ok = v >= Scalar(0) && v < Scalar(num) && static_cast<Scalar>(static_cast<long long>(v)) == v;
        if (!ok && p < f) f = p;
      },
      Kokkos::Min<long long>(first));
  // The Min reducer starts from its identity (the largest long long), not from `first`.
  return first >= positions ? -1 : first;
}

template class Embedding<float>;
template class Embedding<double>;

}  // namespace hpct::nn
