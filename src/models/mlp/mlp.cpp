// The mlp network built from nn::Linear layers (see mlp.hpp).
#include "models/mlp/mlp.hpp"

#include "core/error.hpp"
#include "core/log.hpp"
#include "nn/layers/category_embeddings.hpp"

namespace hpct {

template <class Scalar>
Mlp<Scalar>::Mlp(const MlpConfig& config, int capacity, nn::Precision precision)
    : config_(config), capacity_(capacity), net_(ws_) {
  const int tables = static_cast<int>(config.embedding_rows.size());
  if (tables > 0) {
    if (config.embedding_dim < 1 || tables > config.d_in)
      throw Error(strf("internal: mlp with %d embedded inputs of %d, dim %d", tables, config.d_in,
                       config.embedding_dim));
    net_.template emplace<nn::CategoryEmbeddings<Scalar>>(store_, ws_, "emb", config.d_in - tables,
                                                          config.embedding_rows, config.embedding_dim, capacity,
                                                          precision);
  }
  std::vector<int> widths;
  widths.push_back(config.fc0_in());
  for (int h : config.hidden) widths.push_back(h);
  widths.push_back(config.d_out);
  const std::size_t n_layers = widths.size() - 1;
  for (std::size_t l = 0; l < n_layers; ++l)
    net_.template emplace<nn::Linear<Scalar>>(store_, ws_, "fc" + std::to_string(l), widths[l], widths[l + 1],
                                              capacity,
                                              l + 1 == n_layers ? nn::Activation::identity : config.activation,
                                              precision);
  dout_ = &ws_.request("mlp_dout", capacity, config.d_out);
  store_.allocate();
  ws_.allocate();
  net_.bind(store_);
}

template <class Scalar>
typename Mlp<Scalar>::Matrix Mlp<Scalar>::forward(const Tensor<Scalar>& x, int n) {
  net_.forward(x, n);
  return net_.output().matrix();
}

template <class Scalar>
void Mlp<Scalar>::backward(const Tensor<Scalar>& x, int n) {
  net_.backward(x, *dout_, Tensor<Scalar>(), nn::GradMode::assign, n);
}

template <class Scalar>
double Mlp<Scalar>::forward_flops() const {
  double f = 0;
  int in = config_.fc0_in();
  for (int h : config_.hidden) f += 2.0 * in * h, in = h;
  return f + 2.0 * in * config_.d_out;
}

template class Mlp<float>;
template class Mlp<double>;

}  // namespace hpct
