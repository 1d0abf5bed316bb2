// CategoryEmbeddings kernels: copies between the concatenated layout and each table's (see
// category_embeddings.hpp).
#include "nn/layers/category_embeddings.hpp"

#include "core/error.hpp"
#include "nn/elementwise.hpp"

namespace hpct::nn {

template <class Scalar>
CategoryEmbeddings<Scalar>::CategoryEmbeddings(Store& store, Workspace<Scalar>& ws, const std::string& name,
                                               int numbers, const std::vector<int>& rows, int dim, int capacity,
                                               Precision precision)
    : numbers_(numbers), dim_(dim), capacity_(capacity) {
  if (rows.empty() || dim < 1 || numbers < 0)
    throw Error("internal: CategoryEmbeddings " + name + " needs tables and dim >= 1");
  for (std::size_t c = 0; c < rows.size(); ++c)
    tables_.push_back(std::make_unique<Embedding<Scalar>>(store, ws, name + std::to_string(c), rows[c], dim,
                                                          Shape{capacity}, precision));
  codes_ = &ws.request(name + "/codes", static_cast<std::int64_t>(rows.size()), capacity);
  dy_ = &ws.request(name + "/dy", capacity, dim);
  y_ = &ws.request(name + "/y", capacity, out_cols());
}

template <class Scalar>
void CategoryEmbeddings<Scalar>::bind(const Store& store) {
  for (auto& t : tables_) t->bind(store);
}

template <class Scalar>
Tensor<Scalar> CategoryEmbeddings<Scalar>::codes(std::size_t c, int n) const {
  return T(codes_->data() + static_cast<std::int64_t>(c) * capacity_, Shape{n});
}

template <class Scalar>
void CategoryEmbeddings<Scalar>::forward(const T& x, int n) {
  const auto xm = x.rows(n), y = y_->rows(n), cm = codes_->matrix();
  const int numbers = numbers_, tables = static_cast<int>(tables_.size()), dim = dim_;
  for_each_cell(
      "category_embeddings_numbers", n, numbers, KOKKOS_LAMBDA(const int i, const int j) { y(i, j) = xm(i, j); });
  for_each_cell(
      "category_embeddings_codes", tables, n,
      KOKKOS_LAMBDA(const int c, const int i) { cm(c, i) = xm(i, numbers + c); });
  for (std::size_t c = 0; c < tables_.size(); ++c) {
    tables_[c]->forward(codes(c, n), n);
    const auto e = tables_[c]->output().rows(n);
    const int at = numbers + static_cast<int>(c) * dim;
    for_each_cell(
        "category_embeddings_rows", n, dim, KOKKOS_LAMBDA(const int i, const int j) { y(i, at + j) = e(i, j); });
  }
}

template <class Scalar>
void CategoryEmbeddings<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  (void)x;
  const auto g = dy.rows(n), slice = dy_->rows(n);
  const int numbers = numbers_, dim = dim_;
  for (std::size_t c = tables_.size(); c-- > 0;) {  // reverse registration order
    const int at = numbers + static_cast<int>(c) * dim;
    for_each_cell(
        "category_embeddings_dy", n, dim, KOKKOS_LAMBDA(const int i, const int j) { slice(i, j) = g(i, at + j); });
    tables_[c]->backward(codes(c, n), *dy_, T(), GradMode::assign, n);
  }
  if (dx.empty()) return;
  const auto d = dx.rows(n);
  const int tables = static_cast<int>(tables_.size());
  const bool assign = mode == GradMode::assign;
  for_each_cell(
      "category_embeddings_dx", n, numbers + tables, KOKKOS_LAMBDA(const int i, const int j) {
        const Scalar v = j < numbers ? g(i, j) : Scalar(0);
        d(i, j) = assign ? v : d(i, j) + v;
      });
}

template class CategoryEmbeddings<float>;
template class CategoryEmbeddings<double>;

}  // namespace hpct::nn
