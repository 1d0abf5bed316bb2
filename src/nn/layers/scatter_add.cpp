// ScatterAdd layer kernels (see scatter_add.hpp).
#include "nn/layers/scatter_add.hpp"

namespace hpct::nn {

template <class Scalar>
ScatterAdd<Scalar>::ScatterAdd(Workspace<Scalar>& ws, const std::string& name, int cols, std::int64_t max_indices,
                               std::int64_t max_targets, Precision precision)
    : IndexLayer<Scalar>(ws, name, "scatter_add", cols, max_indices, max_targets, max_targets, precision) {}

template <class Scalar>
void ScatterAdd<Scalar>::forward(const T& x) {
  const auto y = this->y_->rows(static_cast<int>(targets()));
  sum_groups("scatter_fw", x.matrix(), this->groups_, y, false);
  round_values(this->precision_, this->y_->data(), static_cast<std::int64_t>(y.span()));
}

template <class Scalar>
void ScatterAdd<Scalar>::backward(const T& dy, const T& dx, GradMode mode) {
  if (dx.empty()) return;
  const std::int64_t m = this->indices();
  gather_rows("scatter_bw", dy.matrix(), this->groups_.keys(), dx.rows(static_cast<int>(m)), m,
              mode == GradMode::accumulate);
}

template class ScatterAdd<float>;
template class ScatterAdd<double>;

}  // namespace hpct::nn
