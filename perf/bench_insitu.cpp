// Costs of in-situ training through the C API at seed 000's shapes (7 -> 256, the seed's
// diffusion network: hidden 256, depth 2, 50 noise levels, batch 16):
//  - BM_InsituPush: one simulation output step's push (80 samples, fp64, as the seed's 3840
//    samples per 48 output steps) into a 3840-sample buffer; the simulation pays this per output.
//  - BM_InsituSession/epochs:E: a whole session over a full buffer (3840 samples, 240 steps per
//    epoch), with its overhead beyond its optimizer steps (moving the epoch's rows, statistics, the
//    state kept for a rollback, building each epoch's rows, log lines) as the counter overhead_ms
//    (hpctrain_last_session_time); docs/insitu.md reports it next to the example's step time.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "capi/hpctrain.h"

namespace {

constexpr int kContext = 7, kFine = 256, kPerOutput = 80, kBuffer = 3840;

std::string seed_deck(int epochs) {
  return "model diffusion\ninput_width 7\ntarget_width 256\ndiffusion_hidden 256\ndiffusion_depth 2\n"
         "diffusion_steps 50\ntime_embedding_dim 32\nbatch_size 16\nlr 1e-3\nbuffer_capacity 3840\n"
         "session_epochs " +
         std::to_string(epochs) + "\n";
}

void fill(std::vector<double>& x, std::vector<double>& y, int seed) {
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.01 * static_cast<double>(i + seed));
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::cos(0.003 * static_cast<double>(i) + seed);
}

int make_model(int epochs) {
  int h = 0;
  if (hpctrain_create_from_text("bench", seed_deck(epochs).c_str(), MPI_COMM_WORLD, -1, &h) != HPCTRAIN_OK ||
      hpctrain_set_log_callback(
          h, [](const char*, void*) {}, nullptr, 0) != HPCTRAIN_OK)
    return 0;
  return h;
}

void BM_InsituPush(benchmark::State& state) {
  const int h = make_model(1);
  if (h == 0) return state.SkipWithError(hpctrain_last_error());
  std::vector<double> x(kPerOutput * kContext), y(kPerOutput * kFine);
  fill(x, y, 1);
  for (auto _ : state)
    if (hpctrain_push_double(h, x.data(), kPerOutput, kContext, y.data(), kFine, HPCTRAIN_ROW_MAJOR) != HPCTRAIN_OK)
      return state.SkipWithError(hpctrain_last_error());
  state.counters["samples_per_push"] = kPerOutput;
  state.SetItemsProcessed(state.iterations() * kPerOutput);
  hpctrain_destroy(h);
}
BENCHMARK(BM_InsituPush)->Unit(benchmark::kMicrosecond);

void BM_InsituSession(benchmark::State& state) {
  const int epochs = static_cast<int>(state.range(0));
  const int h = make_model(epochs);
  if (h == 0) return state.SkipWithError(hpctrain_last_error());
  std::vector<double> x(kPerOutput * kContext), y(kPerOutput * kFine);
  for (int o = 0; o < kBuffer / kPerOutput; ++o) {
    fill(x, y, o);
    hpctrain_push_double(h, x.data(), kPerOutput, kContext, y.data(), kFine, HPCTRAIN_ROW_MAJOR);
  }
  double overhead = 0;
  for (auto _ : state) {
    double loss = 0, seconds = 0, step_seconds = 0;
    if (hpctrain_train(h, "bench", &loss) != HPCTRAIN_OK) return state.SkipWithError(hpctrain_last_error());
    hpctrain_last_session_time(h, &seconds, &step_seconds);
    overhead += seconds - step_seconds;
  }
  state.counters["overhead_ms"] = 1e3 * overhead / static_cast<double>(state.iterations());
  state.counters["steps_per_session"] = epochs * kBuffer / 16;
  hpctrain_destroy(h);
}
BENCHMARK(BM_InsituSession)->ArgName("epochs")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
