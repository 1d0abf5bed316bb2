// The safetensors writer's layout, and the networks whose conversion test/python/safetensors_parity.py
// checks in PyTorch: an mlp and the diffusion denoiser, each as a weights file written the way train
// writes it (nn::write_weights with the model and config attributes, plus the model's extra datasets)
// and a batch with our forward outputs.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/diffusion/diffusion_model.hpp"
#include "models/mlp/mlp_model.hpp"
#include "models/registry.hpp"
#include "nn/safetensors.hpp"
#include "nn/weights_io.hpp"

namespace hpct {
namespace {

TEST(Safetensors, HeaderLengthJsonOffsetsAndAlignedLittleEndianData) {
  std::vector<nn::NamedTensor> ts{{"fc0.weight", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"fc0.bias", {2}, {-1.5f, 0.25f}}};
  const std::vector<char> img = nn::safetensors_image(ts, {{"format", "pt"}});
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(img[static_cast<std::size_t>(i)]);
  EXPECT_EQ(n % 8, 0u);  // the data starts 8-byte aligned
  ASSERT_EQ(img.size(), 8 + n + 8 * sizeof(float));
  const auto h = nlohmann::json::parse(std::string(img.data() + 8, n));
  EXPECT_EQ(h["__metadata__"]["format"], "pt");
  EXPECT_EQ(h["fc0.weight"]["dtype"], "F32");
  EXPECT_EQ(h["fc0.weight"]["shape"], nlohmann::json({2, 3}));
  EXPECT_EQ(h["fc0.weight"]["data_offsets"], nlohmann::json({0, 24}));
  EXPECT_EQ(h["fc0.bias"]["data_offsets"], nlohmann::json({24, 32}));
  float bias[2];
  std::memcpy(bias, img.data() + 8 + n + 24, sizeof bias);
  EXPECT_EQ(bias[0], -1.5f);
  EXPECT_EQ(bias[1], 0.25f);
  EXPECT_THROW(nn::safetensors_image({{"a", {3}, {1, 2}}}, {}), Error);                // shape vs values
  EXPECT_THROW(nn::safetensors_image({{"a", {1}, {1}}, {"a", {1}, {2}}}, {}), Error);  // repeated name
}

template <class V>
std::vector<float> flat(const V& v) {
  auto h = to_host(v);
  return std::vector<float>(h.data(), h.data() + h.span());
}

View2<float> normal_matrix(int n, int d, std::uint64_t stream) {
  View2<float> x("x", n, d);
  auto h = Kokkos::create_mirror_view(x);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) h(i, j) = static_cast<float>(rng::normal(rng::hash(stream, i, j)));
  Kokkos::deep_copy(x, h);
  return x;
}

// What train writes: the weights with the model's family and config, and its extra datasets.
void write_like_train(const std::string& path, Model& m) {
  nn::write_weights(path, m.store(), {{"model", m.family()}, {"config", m.config_string()}}, m.extra_datasets());
}

TEST(Safetensors, WritesNetworksForThePyTorchCheck) {
  const int n = 8;
  {
    const std::string cfg = "d_in=10 hidden=32,24 d_out=3 activation=gelu";
    std::unique_ptr<Model> m = model_from_config("mlp", cfg, n, "test");
    m->store().initialize(11);
    write_like_train("convert_mlp.weights.h5", *m);
    const View2<float> x = normal_matrix(n, 10, 1);
    const auto y = dynamic_cast<MlpModel&>(*m).mlp().forward(x, n);
    const h5::File f = h5::File::create("convert_mlp.batch.h5");
    h5::write(f, "x", {std::uint64_t(n), 10}, flat(x).data());
    h5::write(f, "y", {std::uint64_t(n), 3}, flat(y).data());
  }
  {
    const std::string cfg =
        "n_context=7 n_fine=64 time_dim=16 hidden=48 depth=2 steps=50 schedule=cosine target=eps";
    std::unique_ptr<Model> m = model_from_config("diffusion", cfg, n, "test");
    m->store().initialize(12);
    write_like_train("convert_diffusion.weights.h5", *m);
    const View2<float> x = normal_matrix(n, 64, 2), c = normal_matrix(n, 7, 3);
    View1<float> t("t", n);
    auto ht = Kokkos::create_mirror_view(t);
    for (int i = 0; i < n; ++i) ht(i) = static_cast<float>((7 * i + 3) % 50);
    Kokkos::deep_copy(t, ht);
    const auto eps = dynamic_cast<DiffusionModel&>(*m).net().forward(x, c, t, n);
    const h5::File f = h5::File::create("convert_diffusion.batch.h5");
    h5::write(f, "x_t", {std::uint64_t(n), 64}, flat(x).data());
    h5::write(f, "c", {std::uint64_t(n), 7}, flat(c).data());
    h5::write(f, "t", {std::uint64_t(n)}, flat(t).data());
    h5::write(f, "eps_hat", {std::uint64_t(n), 64}, flat(eps).data());
  }
}

}  // namespace
}  // namespace hpct
