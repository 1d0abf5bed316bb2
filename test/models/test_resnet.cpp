// The resnet family's pieces: residual blocks (basic and bottleneck, identity and downsampling
// shortcuts) through the finite-difference gradient check and Note [the gradient rule] in double,
// with batch norm in training mode; the stage layout of each depth; and a collective step on no
// rows (synchronised batch norm, Model::collective_step) that leaves the parameters and the
// gradients alone; the network on oneDNN's blocked activations against NCHW; and validation's
// fused chunks (Note [fused conv validation]) against each chunk evaluated alone, bitwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "models/resnet/resnet_model.hpp"
#include "nn/layer_check.hpp"
#include "nn/resnet.hpp"

namespace hpct {
namespace {

using test::DTensor;

TEST(ResNet, ResidualBlocksPassTheGradientCheck) {
  struct B {
    const char* what;
    Shape in;
    int planes, stride;
    bool bottleneck;
  };
  for (const B& b :
       {B{"basic identity", Shape{2, 3, 4, 4}, 3, 1, false}, B{"basic downsample", Shape{2, 2, 5, 4}, 3, 2, false},
        B{"bottleneck downsample", Shape{2, 4, 4, 4}, 2, 2, true},
        B{"bottleneck identity", Shape{2, 8, 3, 3}, 2, 1, true}}) {
    for (const nn::ConvAlgorithm alg : {nn::ConvAlgorithm::gemm, nn::ConvAlgorithm::direct}) {
      nn::ParameterStore<double> store;
      nn::Workspace<double> ws;
      std::vector<nn::BatchNorm2d<double>*> norms;
      ResidualBlock<double> block(store, ws, "block", b.in, b.planes, b.stride, b.bottleneck, alg, norms);
      store.allocate(), ws.allocate();
      block.bind(store);
      store.initialize(5);
      test::fill_normal(store.params(), 6, 0.7);  // batch norm weights away from one
      std::vector<double> p = test::host_values(DTensor(store.params().data(),
                                                        Shape{static_cast<std::int64_t>(store.count())}));
      for (const auto& t : store.tensors())  // the running variances stay positive
        if (!t.trainable)
          for (std::uint64_t i = 0; i < t.size; ++i) p[t.offset + i] = 1.0 + 0.1 * static_cast<double>(i % 3);
      test::set_values(DTensor(store.params().data(), Shape{static_cast<std::int64_t>(p.size())}), p);
      View1<double> xv("x", static_cast<std::size_t>(b.in.size()));
      test::fill_normal(xv, 7);
      const DTensor x(xv.data(), b.in);
      test::expect_gradients_ok(test::check_gradients(test::layer_case(block, x, 2, &store)),
                                std::string("ResidualBlock ") + b.what + " " + nn::conv_algorithm_name(alg), 2e-6);
    }
  }
}

TEST(ResNet, DepthsAndParameterCounts) {
  EXPECT_EQ(resnet_stage_blocks(18), (std::vector<int>{2, 2, 2, 2}));
  EXPECT_EQ(resnet_stage_blocks(34), (std::vector<int>{3, 4, 6, 3}));
  EXPECT_EQ(resnet_stage_blocks(50), (std::vector<int>{3, 4, 6, 3}));
  EXPECT_THROW(resnet_stage_blocks(101), Error);
  // torchvision's resnet18(num_classes=10) has 11,181,642 trainable parameters; ours also stores
  // each batch norm's running mean and variance (2 x 4,800 channels).
  ResNetConfig c;
  c.channels = 3, c.height = 32, c.width = 32, c.classes = 10;
  ResNet<float> net(c, 1);
  std::uint64_t trainable = 0, state = 0;
  for (const auto& t : net.store().tensors()) (t.trainable ? trainable : state) += t.size;
  EXPECT_EQ(trainable, 11181642u);
  EXPECT_EQ(state, 9600u);
  // No weight decay ever reaches the running statistics, not even with weight_decay_all.
  EXPECT_FALSE(net.store().all_trainable());
  for (const bool all : {false, true}) {
    const auto mask = to_host(net.store().decay_mask(all));
    for (const auto& t : net.store().tensors())
      for (std::uint64_t i = 0; i < t.size; ++i)
        ASSERT_EQ(mask(t.offset + i), t.trainable && (all || t.decay) ? 1 : 0) << t.name << " all " << all;
  }
}

TEST(ResNet, AnEmptyCollectiveStepChangesNothing) {
  ResNetConfig c;
  c.channels = 1, c.height = 8, c.width = 8, c.classes = 3, c.base_width = 4, c.small_stem = true;
  ResNet<double> net(c, 2);
  net.store().initialize(3);
  int calls = 0;
  net.set_allreduce([&calls](double*, int) { ++calls; });  // one rank: the sums stay this rank's
  net.store().zero_grads();
  const std::vector<double> before = test::host_values(
      DTensor(net.store().params().data(), Shape{static_cast<std::int64_t>(net.store().count())}));
  View1<double> none("none", 1);
  const DTensor x(none.data(), Shape{0, 1, 8, 8});
  net.set_training(true);
  net.forward(x, 0);
  net.backward(x, 0);
  fence();
  EXPECT_EQ(calls, 2 * 20);  // 20 batch norms (stem, 2 per block, 3 downsamples), forward and backward
  EXPECT_EQ(test::host_values(DTensor(net.store().params().data(),
                                      Shape{static_cast<std::int64_t>(before.size())})),
            before);
  for (const double g :
       test::host_values(DTensor(net.store().grads().data(), Shape{static_cast<std::int64_t>(before.size())})))
    ASSERT_EQ(g, 0.0);
}

std::vector<float> host_floats(const View1<float>& v) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

// Note [blocked activations] (nn/conv_onednn.hpp): with every convolution on oneDNN and widths that
// are multiples of 16, the network keeps its activations in nChw16c from the stem convolution to
// the global pooling. Two training steps (the second after an SGD update by the first's
// gradients), their logits and gradients, the running statistics and an evaluation's logits equal
// those of the NCHW layers (HPCTRAIN_NO_BLOCKED=1) up to the order of the batch-norm sums: within
// 1e-5 of the largest value (+1e-4 relative). The imagenet stem (max pooling blocked) and the small
// one; with the last stage at 1x1 (a batch norm over one pixel has no blocked pass) it stays NCHW.
TEST(ResNet, BlockedActivationsMatchNchw) {
  if (!nn::conv_algorithm_available(nn::ConvAlgorithm::onednn)) GTEST_SKIP() << "no oneDNN in this build";
  const int n = 3;
  for (const bool small : {false, true}) {
    ResNetConfig c;
    c.channels = 3, c.height = c.width = small ? 16 : 64, c.classes = 5, c.base_width = 16, c.small_stem = small;
    c.conv_algorithm = nn::ConvAlgorithm::onednn;
    View1<float> xv("x", static_cast<std::size_t>(n) * c.channels * c.height * c.width);
    test::fill_normal(xv, 11);
    const Tensor<float> x(xv.data(), Shape{n, c.channels, c.height, c.width});
    std::vector<float> out[2], grads[2], params[2];
    for (int blocked = 0; blocked < 2; ++blocked) {
      if (!blocked) setenv("HPCTRAIN_NO_BLOCKED", "1", 1);
      ResNet<float> net(c, n);
      unsetenv("HPCTRAIN_NO_BLOCKED");
      net.store().initialize(1);
      for (int step = 0; step < 2; ++step) {
        if (step == 1) {  // an SGD step, so the second step's gradients depend on the first's
          std::vector<float> p = host_floats(net.store().params());
          const std::vector<float> g = host_floats(net.store().grads());
          for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.05f * g[i];
          Kokkos::deep_copy(net.store().params(),
                            Kokkos::View<const float*, Kokkos::HostSpace>(p.data(), p.size()));
        }
        net.store().zero_grads();
        net.set_training(true);
        const auto y = net.forward(x, n);
        const std::vector<float> z = host_floats(View1<float>(y.data(), static_cast<std::size_t>(n) * c.classes));
        out[blocked].insert(out[blocked].end(), z.begin(), z.end());
        test::fill_normal(net.output_grad_tensor().flat(), 20 + step);
        net.backward(x, n);
      }
      EXPECT_EQ(net.blocked(), blocked == 1) << (small ? "small" : "imagenet") << " stem";
      net.set_training(false);
      const auto y = net.forward(x, n);
      fence();
      const std::vector<float> z = host_floats(View1<float>(y.data(), static_cast<std::size_t>(n) * c.classes));
      out[blocked].insert(out[blocked].end(), z.begin(), z.end());
      grads[blocked] = host_floats(net.store().grads());
      params[blocked] = host_floats(net.store().params());
    }
    for (const auto* v : {out, grads, params}) {
      double scale = 0;
      for (const float e : v[0]) scale = std::max(scale, static_cast<double>(std::abs(e)));
      ASSERT_EQ(v[1].size(), v[0].size());
      for (std::size_t i = 0; i < v[0].size(); ++i)
        ASSERT_NEAR(v[1][i], v[0][i], 1e-5 * scale + 1e-4 * std::abs(v[0][i]))
            << (small ? "small" : "imagenet") << " stem, element " << i << " of " << v[0].size();
    }
  }
  ResNetConfig c;  // 32x32 through the imagenet stem: layer4 is 1x1
  c.channels = 3, c.height = c.width = 32, c.classes = 5, c.base_width = 16;
  c.conv_algorithm = nn::ConvAlgorithm::onednn;
  ResNet<float> net(c, 1);
  View1<float> xv("x", static_cast<std::size_t>(c.channels) * c.height * c.width);
  net.forward(Tensor<float>(xv.data(), Shape{1, c.channels, c.height, c.width}), 1);
  EXPECT_FALSE(net.blocked());
}

// 14 images in chunks of 4 (the last of 2), on the default convolutions (oneDNN with blocked
// activations where the build has it) and on gemm, after two training steps have moved the running
// statistics: evaluate_chunks gives each chunk's metric sums the bits evaluate gives that chunk
// alone. On oneDNN it ran fused (the batch's logits had the chunks' bits); on gemm it did not here
// (OpenBLAS's kernels for the batch's GEMM shapes sum in another order, 1 thread and 2), so this
// also covers the verdict's fallback, chunk by chunk.
TEST(ResNet, FusedValidationChunksAsEachChunkAlone) {
  const int n = 14, rows = 4, metrics = 3;
  for (const char* choice : {"library", "gemm"}) {
    ResNetConfig c;
    c.channels = 3, c.height = c.width = 16, c.classes = 5, c.base_width = 16, c.small_stem = true;
    ResNetModel model(c, n);
    model.set_conv_algorithm(choice, false);
    model.store().initialize(2);
    View1<float> xv("x", static_cast<std::size_t>(n) * c.channels * c.height * c.width);
    test::fill_normal(xv, 12);
    View1<std::int64_t> labels("labels", n);
    auto lh = Kokkos::create_mirror_view(labels);
    for (int i = 0; i < n; ++i) lh(i) = (7 * i + 3) % c.classes;
    Kokkos::deep_copy(labels, lh);
    const std::int64_t image = static_cast<std::int64_t>(c.channels) * c.height * c.width;
    const auto batch = [&](int first, int count) {
      Batch b;
      b.set(Batch::kInputs, Tensor<float>(xv.data() + first * image, Shape{count, c.channels, c.height, c.width}));
      b.set(Batch::kTargets, Tensor<std::int64_t>(labels.data() + first, Shape{count, 1}));
      b.n = count;
      return b;
    };
    for (int step = 0; step < 2; ++step) model.accumulate_gradients(batch(0, n), n);
    const EvalOptions o{2};
    std::vector<double> fused(static_cast<std::size_t>((n + rows - 1) / rows) * metrics, 0.0);
    model.evaluate_chunks(batch(0, n), o, rows, fused.data());
    const bool library = std::strcmp(choice, "library") == 0;
    if (library && nn::conv_algorithm_available(nn::ConvAlgorithm::onednn)) {
      EXPECT_TRUE(model.fuses(n, rows)) << "oneDNN: a batch of " << n << " gave other logits than its chunks";
    }
    for (int first = 0, k = 0; first < n; first += rows, ++k) {
      std::vector<double> alone(metrics, 0.0);
      model.evaluate(batch(first, std::min(rows, n - first)), o, alone);
      EXPECT_EQ(std::memcmp(alone.data(), fused.data() + k * metrics, metrics * sizeof(double)), 0)
          << choice << ", chunk " << k << ": loss " << alone[0] << " alone, " << fused[k * metrics] << " fused";
    }
    if (library) {
      EXPECT_EQ(model.net().blocked(), nn::conv_algorithm_available(nn::ConvAlgorithm::onednn));
    }
  }
}

}  // namespace
}  // namespace hpct
