// Concat layer kernels (see concat.hpp). Pure copies: exact in every precision.
#include "nn/layers/concat.hpp"

#include "nn/elementwise.hpp"

namespace hpct::nn {

template <class Scalar>
Concat<Scalar>::Concat(Workspace<Scalar>& ws, const std::string& name, int cols_a, int cols_b,
                       std::int64_t capacity)
    : cols_a_(cols_a), cols_b_(cols_b) {
  y_ = &ws.request(name + "/y", capacity, cols_a + cols_b);
}

template <class Scalar>
void Concat<Scalar>::forward(const T& a, const T& b, int n) {
  const auto am = a.rows(n), bm = b.rows(n), y = y_->rows(n);
  const int ca = cols_a_;
  for_each_cell(
      "concat_fw", n, cols_a_ + cols_b_,
      KOKKOS_LAMBDA(const int i, const int j) { y(i, j) = j < ca ? am(i, j) : bm(i, j - ca); });
}

namespace {
// d(i, j) (=|+=) g(i, first + j) for the columns [first, first + d.extent(1)) of g.
template <class Matrix>
void split_columns(const char* label, const Matrix& g, int first, const Matrix& d, bool accumulate, int n) {
  for_each_cell(
      label, n, static_cast<int>(d.extent(1)), KOKKOS_LAMBDA(const int i, const int j) {
        const auto v = g(i, first + j);
        d(i, j) = accumulate ? d(i, j) + v : v;
      });
}
}  // namespace

template <class Scalar>
void Concat<Scalar>::backward(const T& dy, const T& da, GradMode mode_a, const T& db, GradMode mode_b, int n) {
  const auto g = dy.rows(n);
  if (!da.empty()) split_columns("concat_bw_a", g, 0, da.rows(n), mode_a == GradMode::accumulate, n);
  if (!db.empty()) split_columns("concat_bw_b", g, cols_a_, db.rows(n), mode_b == GradMode::accumulate, n);
}

template class Concat<float>;
template class Concat<double>;

}  // namespace hpct::nn
