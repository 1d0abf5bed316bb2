// MFU's denominator: a measured host GEMM peak, or a GPU's peak from its data sheet (see peak_flops.hpp).
#include "train/peak_flops.hpp"

#include <algorithm>
#include <chrono>

#include "core/kokkos_compat.hpp"
#include "core/log.hpp"
#include "nn/conv.hpp"
#include "nn/gemm.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace hpct {

namespace {
struct GpuPeak {
  const char* name_part;  // matched against the CUDA device name, first match wins
  const char* label;
  double fp32, half;  // dense FLOP/s: fp32 FMA units; bf16/fp16 tensor cores
};
// NVIDIA data sheets (dense, no sparsity). PCIe parts come before their SXM names.
constexpr GpuPeak kGpuPeaks[] = {
    {"H100 PCIe", "H100 PCIe", 51.2e12, 756e12},
    {"H100 NVL", "H100 NVL", 60.0e12, 835e12},
    {"H100", "H100 SXM", 66.9e12, 989e12},
    {"H200", "H200", 66.9e12, 989e12},
    {"GH200", "GH200", 66.9e12, 989e12},
    {"A100", "A100", 19.5e12, 312e12},
    {"A10", "A10", 31.2e12, 125e12},
    {"L40S", "L40S", 91.6e12, 362e12},
    {"V100", "V100", 15.7e12, 125e12},
};

// Note [measured GEMM peak]: the host peak is the best of several timed 384^3 single-precision
// GEMMs through nn::gemm, the BLAS call the layers make, with the threads the run uses. 384 is large
// enough for the BLAS kernels to run at full rate on a core and small enough that the measurement
// takes a few milliseconds per rank (it runs once, after training). The best repeat, not the mean,
// so that a rank descheduled for a moment does not inflate the MFU.
double measured_sgemm_flops() {
  constexpr int n = 384, repeats = 8;
  View2<float> a("peak_a", n, n), b("peak_b", n, n), c("peak_c", n, n);
  Kokkos::deep_copy(a, 0.5f);
  Kokkos::deep_copy(b, 0.25f);
  double best = 1e30;
  for (int r = 0; r <= repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    nn::gemm('N', 'N', 1.0f, a, b, 0.0f, c);
    fence();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, s);  // the first call warms caches and thread pools
  }
  return 2.0 * n * n * n / best;
}
}  // namespace

PeakFlops gpu_table_peak(const std::string& device_name, nn::Precision precision) {
  for (const GpuPeak& g : kGpuPeaks) {
    if (device_name.find(g.name_part) == std::string::npos) continue;
    const bool half = precision != nn::Precision::fp32;
    return {half ? g.half : g.fp32, strf("%s %s dense peak, data sheet", g.label, half ? "bf16/fp16" : "fp32")};
  }
  return {};
}

PeakFlops rank_peak_flops(nn::Precision precision) {
#if defined(KOKKOS_ENABLE_CUDA)
  int dev = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return {};
  // bf16/fp16: Linear's GEMMs run on tensor cores (cublasGemmEx, fp32 accumulation; Note [half
  // GEMMs]), so the MFU is against the half-precision peak; so do convolutions through cuDNN
  // (conv_algorithm cudnn or auto, Note [cuDNN precision]), the others run in fp32.
  PeakFlops p = gpu_table_peak(prop.name, precision);
  if (precision != nn::Precision::fp32 && p.flops_per_s > 0)
    p.source += nn::conv_algorithm_available(nn::ConvAlgorithm::cudnn)
                    ? ", tensor-core bf16/fp16 GEMMs (cuBLAS) and convolutions (cuDNN, with conv_algorithm "
                      "cudnn|auto; "
                      "others fp32), fp32 accumulation"
                    : ", tensor-core bf16/fp16 GEMMs (cuBLAS, fp32 accumulation; convolutions fp32)";
  return p;
#else
  (void)precision;  // host GEMMs run in fp32 at every precision setting (exact emulation, no half units)
  return {measured_sgemm_flops(), strf("sgemm measured with %d thread(s) per rank; GEMMs: %s, fp32",
                                       HostExecSpace().concurrency(), nn::gemm_library_name().c_str())};
#endif
}

}  // namespace hpct
