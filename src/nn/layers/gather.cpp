// Gather layer kernels (see gather.hpp).
#include "nn/layers/gather.hpp"

namespace hpct::nn {

template <class Scalar>
Gather<Scalar>::Gather(Workspace<Scalar>& ws, const std::string& name, int cols, std::int64_t max_indices,
                       std::int64_t max_sources, Precision precision)
    : name_(name), precision_(precision), groups_(name, max_indices, max_sources) {
  y_ = &ws.request(name + "/y", max_indices, cols);
}

template <class Scalar>
void Gather<Scalar>::set_indices(const std::vector<int>& index, std::int64_t sources) {
  groups_.build_from(index, sources, name_ + " (gather) indices");
}

template <class Scalar>
void Gather<Scalar>::forward(const T& x) {
  const std::int64_t m = indices();
  gather_rows("gather_fw", x.matrix(), groups_.keys(), y_->rows(static_cast<int>(m)), m, false);
}

template <class Scalar>
void Gather<Scalar>::backward(const T& dy, const T& dx, GradMode mode) {
  if (dx.empty()) return;
  const auto d = dx.rows(static_cast<int>(sources()));
  sum_groups("gather_bw", dy.matrix(), groups_, d, mode == GradMode::accumulate);
  round_values(precision_, dx.data(), static_cast<std::int64_t>(d.span()));
}

template class Gather<float>;
template class Gather<double>;

}  // namespace hpct::nn
