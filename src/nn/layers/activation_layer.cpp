// Activation layer kernels (see activation_layer.hpp).
#include "nn/layers/activation_layer.hpp"

#include "nn/elementwise.hpp"

namespace hpct::nn {

template <class Scalar>
ActivationLayer<Scalar>::ActivationLayer(Workspace<Scalar>& ws, const std::string& name, const Shape& shape,
                                         Activation act, Precision precision)
    : act_(act), precision_(precision) {
  y_ = &ws.request(name + "/y", shape);
}

template <class Scalar>
void ActivationLayer<Scalar>::forward(const T& x, int n) {
  const auto xm = x.rows(n), y = y_->rows(n);
  const Activation act = act_;
  for_each_cell(
      "act_fw", n, static_cast<int>(y.extent(1)),
      KOKKOS_LAMBDA(const int i, const int j) { y(i, j) = activate(act, xm(i, j)); });
  round_values(precision_, y_->data(), static_cast<std::int64_t>(y.span()));
}

template <class Scalar>
void ActivationLayer<Scalar>::backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) {
  if (dx.empty()) return;
  const auto xm = x.rows(n), g = dy.rows(n), d = dx.rows(n);
  const Activation act = act_;
  const bool acc = mode == GradMode::accumulate;
  for_each_cell(
      "act_bw", n, static_cast<int>(d.extent(1)), KOKKOS_LAMBDA(const int i, const int j) {
        const Scalar v = g(i, j) * activate_grad(act, xm(i, j));
        d(i, j) = acc ? d(i, j) + v : v;
      });
  round_values(precision_, dx.data(), static_cast<std::int64_t>(d.span()));
}

template class ActivationLayer<float>;
template class ActivationLayer<double>;

}  // namespace hpct::nn
