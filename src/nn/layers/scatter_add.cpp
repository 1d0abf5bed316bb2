// ScatterAdd layer kernels (see scatter_add.hpp).
#include "nn/layers/scatter_add.hpp"

namespace hpct::nn {

template <class Scalar>
ScatterAdd<Scalar>::ScatterAdd(Workspace<Scalar>& ws, const std::string& name, int cols, std::int64_t max_indices,
                               std::int64_t max_targets, Precision precision)
    : name_(name), precision_(precision), groups_(name, max_indices, max_targets) {
  y_ = &ws.request(name + "/y", max_targets, cols);
}

template <class Scalar>
void ScatterAdd<Scalar>::set_indices(const std::vector<int>& index, std::int64_t targets) {
  groups_.build_from(index, targets, name_ + " (scatter_add) indices");
}

template <class Scalar>
void ScatterAdd<Scalar>::forward(const T& x) {
  const auto y = y_->rows(static_cast<int>(targets()));
  sum_groups("scatter_fw", x.matrix(), groups_, y, false);
  round_values(precision_, y_->data(), static_cast<std::int64_t>(y.span()));
}

template <class Scalar>
void ScatterAdd<Scalar>::backward(const T& dy, const T& dx, GradMode mode) {
  if (dx.empty()) return;
  const std::int64_t m = indices();
  gather_rows("scatter_bw", dy.matrix(), groups_.keys(), dx.rows(static_cast<int>(m)), m,
              mode == GradMode::accumulate);
}

template class ScatterAdd<float>;
template class ScatterAdd<double>;

}  // namespace hpct::nn
