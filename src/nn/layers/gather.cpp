// Gather layer kernels (see gather.hpp).
#include "nn/layers/gather.hpp"

namespace hpct::nn {

template <class Scalar>
Gather<Scalar>::Gather(Workspace<Scalar>& ws, const std::string& name, int cols, std::int64_t max_indices,
                       std::int64_t max_sources, Precision precision)
    : IndexLayer<Scalar>(ws, name, "gather", cols, max_indices, max_sources, max_indices, precision) {}

template <class Scalar>
void Gather<Scalar>::forward(const T& x) {
  const std::int64_t m = this->indices();
  gather_rows("gather_fw", x.matrix(), this->groups_.keys(), this->y_->rows(static_cast<int>(m)), m, false);
}

template <class Scalar>
void Gather<Scalar>::backward(const T& dy, const T& dx, GradMode mode) {
  if (dx.empty()) return;
  const auto d = dx.rows(static_cast<int>(sources()));
  sum_groups("gather_bw", dy.matrix(), this->groups_, d, mode == GradMode::accumulate);
  round_values(this->precision_, dx.data(), static_cast<std::int64_t>(d.span()));
}

template class Gather<float>;
template class Gather<double>;

}  // namespace hpct::nn
