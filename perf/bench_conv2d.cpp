// nn::Conv2d<float> forward and backward (weights + data) at ResNet-18's shapes for 64x64 images,
// batch 8, by algorithm (gemm: im2col + BLAS; direct; onednn where the build has it): GFLOP/s per layer shape, to hold against
// bench_gemm's sgemm rate (docs/cnn.md).
#include <benchmark/benchmark.h>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "nn/layers/conv2d.hpp"

namespace {

constexpr int kBatch = 8;

struct ConvShape {
  const char* name;
  int c_in, size, c_out, kernel, stride;
};
// ResNet-18 on 3x64x64: the stem, one 3x3 of each stage, and a stride-2 1x1 downsample.
constexpr ConvShape kShapes[] = {
    {"stem 3x64x64 7x7/2", 3, 64, 64, 7, 2},   {"layer1 64x16x16 3x3", 64, 16, 64, 3, 1},
    {"layer2 128x8x8 3x3", 128, 8, 128, 3, 1}, {"layer3 256x4x4 3x3", 256, 4, 256, 3, 1},
    {"layer4 512x2x2 3x3", 512, 2, 512, 3, 1}, {"downsample 64x16x16 1x1/2", 64, 16, 128, 1, 2},
};

void run(benchmark::State& state, bool backward) {
  const ConvShape& s = kShapes[state.range(0)];
  const auto alg = static_cast<hpct::nn::ConvAlgorithm>(state.range(1));
  hpct::nn::ParameterStore<float> store;
  hpct::nn::Workspace<float> ws;
  hpct::nn::Conv2dOptions o;
  o.out_channels = s.c_out, o.kernel = s.kernel, o.stride = s.stride, o.padding = s.kernel / 2, o.bias = false;
  o.algorithm = alg;
  const hpct::Shape in{kBatch, s.c_in, s.size, s.size};
  hpct::nn::Conv2d<float> conv(store, ws, "conv", in, o);
  store.allocate();
  ws.allocate();
  store.initialize(42);
  conv.bind(store);
  const hpct::Shape out = conv.output().shape();
  hpct::View2<float> x("x", kBatch, in.row_size()), dx("dx", kBatch, in.row_size()),
      dy("dy", kBatch, out.row_size());
  hpct::perf::fill_pattern(x, 1);
  hpct::perf::fill_pattern(dy, 2);
  const hpct::Tensor<float> xt(x.data(), in), dyt(dy.data(), out), dxt(dx.data(), in);
  conv.forward(xt, kBatch);
  hpct::fence();
  for (auto _ : state) {
    if (backward) conv.backward(xt, dyt, dxt, hpct::nn::GradMode::assign, kBatch);
    else conv.forward(xt, kBatch);
    hpct::fence();
  }
  const double flops = (backward ? 4.0 : 2.0) * kBatch * conv.geometry().macs_per_sample();
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(s.name) + " " + hpct::nn::conv_algorithm_name(alg) +
                 (alg == hpct::nn::ConvAlgorithm::gemm ? " chunk " + std::to_string(conv.geometry().batch_chunk)
                                                       : ""));
}

void BM_Conv2dForward(benchmark::State& state) { run(state, false); }
void BM_Conv2dBackward(benchmark::State& state) { run(state, true); }

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"shape", "algorithm"});  // algorithm: 0 gemm, 1 direct, 2 onednn (ConvAlgorithm)
  const bool onednn = hpct::nn::conv_algorithm_available(hpct::nn::ConvAlgorithm::onednn);
  for (int i = 0; i < static_cast<int>(sizeof(kShapes) / sizeof(kShapes[0])); ++i)
    for (int a = 0; a < 3; ++a)
      // direct on the 64x64 stem and layer1 takes seconds: not timed
      if (a == 0 || (a == 1 && i >= 2) || (a == 2 && onednn)) b->Args({i, a});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_Conv2dForward)->Apply(shapes);
BENCHMARK(BM_Conv2dBackward)->Apply(shapes);

}  // namespace
