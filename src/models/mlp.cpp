#include "models/mlp.hpp"

namespace hpct {

template <class Scalar>
Mlp<Scalar>::Mlp(const MlpConfig& config, int capacity, std::size_t extra_grad_slots)
    : config_(config), capacity_(capacity) {
  std::vector<int> widths;
  widths.push_back(config.d_in);
  for (int h : config.hidden) widths.push_back(h);
  widths.push_back(config.d_out);
  const std::size_t n_layers = widths.size() - 1;
  layers_.reserve(n_layers);
  for (std::size_t l = 0; l < n_layers; ++l)
    layers_.emplace_back(store_, "fc" + std::to_string(l), widths[l], widths[l + 1],
                         l + 1 == n_layers ? nn::Activation::identity : config.activation);
  store_.allocate(extra_grad_slots);
  for (auto& layer : layers_) layer.bind(store_, capacity);
  // grads_[0] stays empty: nobody needs dL/dx of the data.
  grads_.emplace_back();
  for (std::size_t l = 1; l <= n_layers; ++l)
    grads_.emplace_back("mlp_grad", capacity, widths[l]);
}

template <class Scalar>
const typename Mlp<Scalar>::Matrix& Mlp<Scalar>::forward(const Matrix& x, int n) {
  const Matrix* in = &x;
  for (auto& layer : layers_) {
    layer.forward(*in, n);
    in = &layer.output();
  }
  return *in;
}

template <class Scalar>
void Mlp<Scalar>::backward(const Matrix& x, int n) {
  for (std::size_t l = layers_.size(); l-- > 0;) {
    const Matrix& in = l == 0 ? x : layers_[l - 1].output();
    layers_[l].backward(in, grads_[l + 1], grads_[l], n);
  }
}

template class Mlp<float>;
template class Mlp<double>;

}  // namespace hpct
