// The resnet family's pieces: residual blocks (basic and bottleneck, identity and downsampling
// shortcuts) through the finite-difference gradient check and Note [the gradient rule] in double,
// with batch norm in training mode; the stage layout of each depth; and a collective step on no
// rows (synchronised batch norm, Model::collective_step) that leaves the parameters and the
// gradients alone.
#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace hpct
