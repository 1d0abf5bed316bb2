// The whole `model transformer` against PyTorch: a tiny TransformerModel (dropout 0) runs one training
// step on four token rows and writes parity_lm.h5 (every parameter and gradient, the tokens, the loss
// sum) for test/python/lm_parity.py, which rebuilds the network functionally in torch.
#include <gtest/gtest.h>

#include "io/hdf5.hpp"
#include "models/transformer/transformer_model.hpp"

using namespace hpct;

TEST(LmParityDump, OneStepOfATinyModel) {
  lm::TransformerConfig c;
  c.vocab = 11, c.dim = 12, c.heads = 3, c.layers = 2, c.seq_len = 7, c.dropout = 0;
  const int rows = 4;
  lm::TransformerModel model(c, rows);
  model.store().initialize(5);
  std::vector<std::int64_t> tokens;
  for (int i = 0; i < rows * c.seq_len; ++i) tokens.push_back((i * 7 + i / 3) % c.vocab);
  View1<std::int64_t> d_tokens("tokens", tokens.size());
  Kokkos::deep_copy(d_tokens, Kokkos::View<const std::int64_t*, HostSpace, Kokkos::MemoryUnmanaged>(tokens.data(),
                                                                                                    tokens.size()));
  View1<std::uint64_t> ids("ids", rows);
  Batch b;
  b.n = rows, b.ids = ids;
  b.set<std::int64_t>("tokens", Tensor<std::int64_t>(d_tokens.data(), Shape{rows, c.seq_len}));
  model.store().zero_grads();
  const double loss = model.accumulate_gradients(b, rows);
  fence();
  const h5::File f = h5::File::create("parity_lm.h5");
  h5::write_attr(f, "/", "heads", static_cast<long long>(c.heads));
  h5::write_attr(f, "/", "layers", static_cast<long long>(c.layers));
  h5::write_attr(f, "/", "normaliser", static_cast<double>(rows));
  h5::write_attr(f, "/", "loss_sum", loss);
  std::vector<long long> t(tokens.begin(), tokens.end());
  h5::write(f, "tokens", {static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(c.seq_len)}, t.data());
  auto p = to_host(model.store().params());
  auto g = to_host(model.store().grads());
  for (const auto& tensor : model.store().tensors()) {
    h5::write(f, "params/" + tensor.name, tensor.shape, p.data() + tensor.offset);
    h5::write(f, "grads/" + tensor.name, tensor.shape, g.data() + tensor.offset);
  }
}
