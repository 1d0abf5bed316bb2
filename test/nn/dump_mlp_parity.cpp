// Writes an MLP's weights, a batch, our forward output, MSE loss and every parameter gradient to
// HDF5, for test/python/mlp_parity.py to recompute in PyTorch on the same weights; one MLP with
// category embeddings (its last inputs codes, a code repeated, the tables' last rows used).
#include <gtest/gtest.h>

#include <vector>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/mlp/mlp.hpp"
#include "nn/loss.hpp"
#include "nn/weights_io.hpp"

using namespace hpct;

namespace {
void dump(const std::string& path, nn::Activation act, const std::vector<int>& embedding_rows = {}) {
  const int n = 16, d_in = 10, d_out = 3;
  MlpConfig cfg{d_in, d_out, {32, 24}, act};
  cfg.embedding_rows = embedding_rows;
  cfg.embedding_dim = embedding_rows.empty() ? 0 : 5;
  const int numbers = d_in - static_cast<int>(embedding_rows.size());
  Mlp<float> mlp(cfg, n);
  mlp.store().initialize(2024);
  View2<float> x("x", n, d_in), t("t", n, d_out);
  auto hx = Kokkos::create_mirror_view(x);
  auto ht = Kokkos::create_mirror_view(t);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d_in; ++j)
      hx(i, j) = j < numbers
                     ? static_cast<float>(rng::normal(rng::hash(1, i, j)))
                     : static_cast<float>((i * 7 + j) % embedding_rows[static_cast<std::size_t>(j - numbers)]);
    for (int j = 0; j < d_out; ++j) ht(i, j) = static_cast<float>(rng::normal(rng::hash(2, i, j)));
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(t, ht);
  mlp.store().zero_grads();
  const auto& y = mlp.forward(x, n);
  const double sse = nn::mse_forward_backward(y, t, mlp.output_grad(), n, n);
  auto hy = to_host(y);
  mlp.backward(x, n);

  nn::write_weights(path, mlp.store(), {{"activation", nn::activation_name(act)}});
  // Append the batch and our results to the same file.
  const h5::File f = h5::File::open_rw(path);
  auto write = [&](const std::string& name, const std::vector<std::uint64_t>& dims, const float* data) {
    h5::write(f, name, dims, data);
  };
  write("batch/x", {std::uint64_t(n), std::uint64_t(d_in)}, hx.data());
  write("batch/t", {std::uint64_t(n), std::uint64_t(d_out)}, ht.data());
  write("ours/y", {std::uint64_t(n), std::uint64_t(d_out)}, hy.data());
  const float loss = static_cast<float>(sse / (n * d_out));
  write("ours/loss", {1}, &loss);
  auto g = to_host(mlp.store().grads());
  for (const auto& tensor : mlp.store().tensors())
    write("ours/grad/" + tensor.name, tensor.shape, g.data() + tensor.offset);
}
}  // namespace

TEST(MlpParityDump, WritesOneFilePerActivation) {
  for (auto act : {nn::Activation::relu, nn::Activation::gelu, nn::Activation::silu, nn::Activation::tanh})
    dump(std::string("parity_mlp_") + nn::activation_name(act) + ".h5", act);
  dump("parity_mlp_embeddings.h5", nn::Activation::gelu, {9, 4, 17});
}
