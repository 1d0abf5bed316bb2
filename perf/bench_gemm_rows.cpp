// nn::Linear's forward GEMM y [R, N] = x [R, K] W [N, K]^T at SMART's shapes (many rows: edges x
// hidden 128; K = 129 for the Fourier features' 2F + 1), through each route available on host
// builds: nn::gemm (Note [transposed-A small GEMMs]: LIBXSMM in 16-row chunks), OpenBLAS's sgemm_
// called directly, oneDNN's dnnl_sgemm, and K padded with zero columns to a multiple of 16.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "nn/gemm.hpp"

#if defined(HPCTRAIN_HAVE_ONEDNN)
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

#if !defined(KOKKOS_ENABLE_CUDA)
// Args: R (rows), N (out), K (in), route (0 nn::gemm, 1 sgemm_, 2 dnnl_sgemm), K padded to 16 (0/1).
void BM_LinearForwardRoute(benchmark::State& state) {
  const int r = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
  const int k0 = static_cast<int>(state.range(2)), route = static_cast<int>(state.range(3));
  const int k = state.range(4) != 0 ? (k0 + 15) / 16 * 16 : k0;
  std::vector<float> x(static_cast<std::size_t>(r) * k, 0.0f), w(static_cast<std::size_t>(n) * k, 0.0f),
      y(static_cast<std::size_t>(r) * n);
  for (int i = 0; i < r; ++i)
    for (int p = 0; p < k0; ++p) x[static_cast<std::size_t>(i) * k + p] = 0.001f * static_cast<float>((i + p) % 97);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k0; ++p) w[static_cast<std::size_t>(j) * k + p] = 0.002f * static_cast<float>((j * p) % 89);
  using M = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  const M xv(x.data(), r, k), wv(w.data(), n, k), yv(y.data(), r, n);
  const float one = 1.0f, zero = 0.0f;
  auto call = [&] {
    if (route == 0) {
      hpct::nn::gemm('N', 'T', 1.0f, xv, wv, 0.0f, yv);
    } else if (route == 1) {
      sgemm_("T", "N", &n, &r, &k, &one, w.data(), &k, x.data(), &k, &zero, y.data(), &n);
    } else {
#if defined(HPCTRAIN_HAVE_ONEDNN)
      dnnl_sgemm('N', 'T', r, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f, y.data(), n);
#endif
    }
  };
  call();
  for (auto _ : state) call();
  state.SetLabel(std::string(route == 0   ? "nn::gemm"
                             : route == 1 ? "sgemm_"
                                          : "dnnl_sgemm") +
                 (k != k0 ? " K padded" : ""));
  state.counters["GFLOP"] = benchmark::Counter(2.0 * r * n * static_cast<double>(k0) * 1e-9,
                                               benchmark::Counter::kIsIterationInvariantRate);
}
void forward_shapes(benchmark::internal::Benchmark* bm) {
  bm->ArgNames({"R", "N", "K", "route", "pad"});
  for (const int rows : {1884, 30144})
    for (const int route : {0, 1, 2}) {
      bm->Args({rows, 128, 128, route, 0});
      bm->Args({rows, 128, 129, route, 0});
      bm->Args({rows, 128, 129, route, 1});
    }
  bm->UseRealTime()->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_LinearForwardRoute)->Apply(forward_shapes);
#endif

}  // namespace
