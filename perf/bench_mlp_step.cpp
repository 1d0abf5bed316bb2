// One full MLP train step (10 -> 256 -> 256 -> 1, GELU): forward, MSE backward, AdamW step, at
// batch 16 and 256 on one rank (no gradient all-reduce): the compute floor of a training step.
#include <benchmark/benchmark.h>

#include "core/kokkos_compat.hpp"
#include "fill.hpp"
#include "models/mlp/mlp.hpp"
#include "nn/loss.hpp"
#include "optim/optimizer.hpp"

namespace {

void BM_MlpTrainStep(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  hpct::MlpConfig config;
  config.d_in = 10;  // Friedman #1 inputs
  config.d_out = 1;
  config.hidden = {256, 256};
  config.activation = hpct::nn::Activation::gelu;
  hpct::Mlp<float> model(config, batch);
  model.store().initialize(42);
  hpct::optim::OptimizerConfig oc;
  oc.kind = "adamw";
  oc.weight_decay = 1e-4;
  hpct::optim::Optimizer<float> optimizer(oc, model.store().count());

  hpct::View2<float> x("x", batch, config.d_in), t("t", batch, config.d_out);
  hpct::perf::fill_pattern(x, 3);
  hpct::perf::fill_pattern(t, 4);
  hpct::fence();

  double loss = 0.0;
  for (auto _ : state) {
    model.store().zero_grads();
    const auto& y = model.forward(x, batch);
    loss = hpct::nn::mse_forward_backward(y, t, model.output_grad(), batch, batch);
    model.backward(x, batch);
    optimizer.step(model.store().param_span(), model.store().grad_span(), 1e-4);
    hpct::fence();
  }
  benchmark::DoNotOptimize(loss);
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["params"] = static_cast<double>(model.store().count());
}
BENCHMARK(BM_MlpTrainStep)->ArgName("batch")->Arg(16)->Arg(256)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
