// A whole ResNet training step (training-mode forward with a batch-norm reducer, backward) and an
// evaluation forward allocate nothing (Note [the gradient rule], point 3): heap and Kokkos View
// allocations are counted after one warm-up step, for both convolution algorithms and for image
// sizes that take one GEMM per chunk of samples and one per sample (Note [convolution chunks]); and
// for oneDNN's convolutions where the build has them (Note [oneDNN plans]: built in the warm-up),
// at width 16 so that the 96x96 network runs on blocked activations (Note [blocked activations]).
#include <gtest/gtest.h>

#include "nn/conv_onednn.hpp"
#include "nn/resnet.hpp"
#include "support/allocation_counter.hpp"

namespace hpct {
namespace {

TEST(ResNetAllocation, TrainingAndEvaluationStepsAllocateNothing) {
  for (const int side : {8, 96})  // 96: the stem convolution runs one sample per GEMM
    for (const nn::ConvAlgorithm alg :
         {nn::ConvAlgorithm::gemm, nn::ConvAlgorithm::direct, nn::ConvAlgorithm::onednn}) {
      if (!nn::conv_algorithm_available(alg)) continue;  // oneDNN: where the build found it
      ResNetConfig c;
      c.channels = 2, c.height = c.width = side, c.classes = 4, c.small_stem = side == 8;
      c.base_width = alg == nn::ConvAlgorithm::onednn ? 16 : 8;
      c.conv_algorithm = alg;
      const int n = 3;
      ResNet<float> net(c, n);
      net.store().initialize(1);
      double sink = 0;
      net.set_allreduce([&sink](double* v, int count) { sink += v[count - 1]; });  // no MPI here
      View1<float> xv("x", static_cast<std::size_t>(n) * c.channels * side * side);
      Kokkos::deep_copy(xv, 0.25f);
      Kokkos::deep_copy(net.output_grad_tensor().flat(), 1.0f);
      const Tensor<float> x(xv.data(), Shape{n, c.channels, side, side});
      auto step = [&]() {
        net.set_training(true);
        net.forward(x, n);
        net.backward(x, n);
        net.set_training(false);
        net.forward(x, n);
        fence();
      };
      step();  // warm-up
      // Blocked on oneDNN at 96x96; at 8x8 layer4 is 1x1, which keeps it NCHW.
      EXPECT_EQ(net.blocked(), alg == nn::ConvAlgorithm::onednn && side == 96);
      test::start_counting_allocations();
      step();
      const test::AllocationCounts counts = test::stop_counting_allocations();
      if (alg == nn::ConvAlgorithm::onednn) {
        // Note [oneDNN plans]: oneDNN's own execute builds a small argument map per primitive call
        // (a few heap blocks inside libdnnl, out of our reach); what must hold is that no plan
        // (primitive, buffer, scratchpad) is built after the warm-up.
        const std::size_t plans = nn::onednn::plans_built();
        EXPECT_GT(plans, 0U);
        step();
        EXPECT_EQ(nn::onednn::plans_built(), plans) << "oneDNN plans built after the warm-up";
      } else {
        EXPECT_EQ(counts.heap, 0) << "heap allocations in a ResNet step, " << side << "x" << side << " "
                                  << nn::conv_algorithm_name(alg);
      }
      EXPECT_EQ(counts.views, 0) << "Kokkos View allocations in a ResNet step, " << side << "x" << side << " "
                                 << nn::conv_algorithm_name(alg);
      EXPECT_GT(sink, 0.0);
    }
}

}  // namespace
}  // namespace hpct
