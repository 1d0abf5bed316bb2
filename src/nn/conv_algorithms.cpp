// The convolution algorithms a build offers (nn/conv.hpp's ConvAlgorithm): names, which are
// available (oneDNN, cuDNN), the defaults, and the banner's line of math libraries.
#include "core/blas_kernels.hpp"
#include "core/error.hpp"
#include "core/kokkos_compat.hpp"  // KOKKOS_ENABLE_CUDA: the banner names cuBLAS on CUDA builds
#include "nn/conv.hpp"
#include "nn/conv_cudnn.hpp"
#include "nn/conv_onednn.hpp"
#include "nn/gemm_small.hpp"

namespace hpct::nn {

ConvAlgorithm conv_algorithm_from_name(const std::string& name) {
  if (name == "gemm") return ConvAlgorithm::gemm;
  if (name == "direct") return ConvAlgorithm::direct;
  if (name == "onednn") {
    if (!onednn::available())
      throw Error("conv_algorithm onednn: this build has no oneDNN (libdnnl-dev / spack onednn)");
    return ConvAlgorithm::onednn;
  }
  if (name == "cudnn") {
    if (!cudnn::available())
      throw Error(
          "conv_algorithm cudnn: this build has no cuDNN (CUDA builds find it in the toolkit, CUDNN_ROOT or spack "
          "cudnn)");
    return ConvAlgorithm::cudnn;
  }
  throw Error("unknown convolution algorithm '" + name + "' (gemm, direct, onednn, cudnn)");
}

const char* conv_algorithm_name(ConvAlgorithm a) {
  return a == ConvAlgorithm::gemm     ? "gemm"
         : a == ConvAlgorithm::direct ? "direct"
         : a == ConvAlgorithm::onednn ? "onednn"
                                      : "cudnn";
}

const ConvAlgorithm* conv_algorithms_available(int& count) {
  static const ConvAlgorithm all[] = {ConvAlgorithm::gemm, ConvAlgorithm::direct, ConvAlgorithm::onednn};
  static const ConvAlgorithm library[] = {ConvAlgorithm::cudnn};
  if (cudnn::available()) return count = 1, library;
  count = onednn::available() ? 3 : 2;
  return all;
}

bool conv_algorithm_available(ConvAlgorithm a) {
  return a == ConvAlgorithm::onednn ? onednn::available() : a == ConvAlgorithm::cudnn ? cudnn::available() : true;
}

ConvAlgorithm conv_algorithm_deterministic() {
  return cudnn::available() ? ConvAlgorithm::cudnn : ConvAlgorithm::gemm;
}

ConvAlgorithm conv_algorithm_library() {
  if (cudnn::available()) return ConvAlgorithm::cudnn;
  return conv_algorithm_available(ConvAlgorithm::onednn) ? ConvAlgorithm::onednn : ConvAlgorithm::gemm;
}

void set_conv_search(bool benchmark, bool deterministic) { cudnn::set_search(benchmark, deterministic); }

std::string gemm_library_name() {
#if defined(KOKKOS_ENABLE_CUDA)
  return "cuBLAS";
#else
  return libxsmm_version().empty() ? HPCTRAIN_BLAS_NAME
                                   : std::string(HPCTRAIN_BLAS_NAME) + " + " + libxsmm_version();
#endif
}

std::string math_libraries_line() {
#if defined(KOKKOS_ENABLE_CUDA)
  std::string s =
      "  math: GEMM cuBLAS (KokkosBlas fp32; Linear bf16/fp16 on tensor cores: cublasGemmEx, fp32 accumulation)";
#else
  std::string s = std::string("  math: GEMM ") + HPCTRAIN_BLAS_NAME;
  // OpenBLAS's kernel set for this CPU (Note [OpenBLAS on unknown CPU models]).
  if (!openblas_core_name().empty()) {
    s += " (" + openblas_core_name() + " kernels";
    if (!openblas_replaced_core().empty())
      s += ", in place of its generic " + openblas_replaced_core() + " ones for this CPU model";
    s += ")";
  }
  if (!libxsmm_version().empty()) s += " + " + libxsmm_version() + " (small GEMMs)";
  s += " (fp32; bf16/fp16 emulated by rounding)";
#endif
  s += "; convolutions gemm, direct";
  if (onednn::available()) s += ", onednn (" + onednn::version() + ")";
  if (cudnn::available())
    s += ", cudnn (" + cudnn::version() +
         ": fp32 without TF32, bf16/fp16 on tensor cores with fp32 accumulation; auto = benchmark mode)";
  return s;
}

}  // namespace hpct::nn
