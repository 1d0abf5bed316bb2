// cuDNN's algorithm for a plan (conv_cudnn_plan.hpp; Note [cuDNN plans]): cuDNN's heuristic ranking
// or a timed search of every algorithm, each filtered by workspace, determinism and, in fp32, no
// tensor-core math (Note [cuDNN precision]).
#include "nn/conv_cudnn_plan.hpp"

#if defined(HPCTRAIN_HAVE_CUDNN)
#include "core/kokkos_compat.hpp"

namespace hpct::nn::cudnn {

namespace {

// A temporary device buffer for the benchmark search (plan building only).
struct Temporary {
  void* data = nullptr;
  explicit Temporary(std::size_t bytes) {
    if (bytes) check_cuda(cudaMalloc(&data, bytes), "cudaMalloc (cuDNN search)");
  }
  ~Temporary() {
    if (data) cudaFree(data);
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
};

template <class Perf>
Choice pick(const Perf* results, int count, Precision p) {
  Choice c;
  c.considered = count;
  for (int i = 0; i < count; ++i) {
    const Perf& r = results[i];
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > kMaxWorkspaceBytes) continue;
    if (deterministic() && r.determinism != CUDNN_DETERMINISTIC) continue;
    // Note [cuDNN precision]: no tensor-core (TF32) kernels for fp32.
    if (p == Precision::fp32 &&
        (r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
      continue;
    c.algo = static_cast<int>(r.algo), c.time = r.time, c.memory = r.memory, c.math = r.mathType;
    return c;
  }
  return c;
}

}  // namespace

const char* algo_name(Dir d, int a) {
  static const char* const fw[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
                                   "WINOGRAD",      "WINOGRAD_NONFUSED"};
  static const char* const bd[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  static const char* const bw[] = {"ALGO_0",    "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
                                   "FFT_TILING"};
  if (d == Dir::forward) return a >= 0 && a < 8 ? fw[a] : "?";
  if (d == Dir::backward_data) return a >= 0 && a < 6 ? bd[a] : "?";
  return a >= 0 && a < 7 ? bw[a] : "?";
}

std::size_t workspace_of(const Plan& pl, int algo) {
  std::size_t bytes = 0;
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  if (pl.dir == Dir::forward)
    s = cudnnGetConvolutionForwardWorkspaceSize(handle(), pl.x, pl.w, pl.conv, pl.y,
                                                static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes);
  else if (pl.dir == Dir::backward_data)
    s = cudnnGetConvolutionBackwardDataWorkspaceSize(handle(), pl.w, pl.y, pl.conv, pl.x,
                                                     static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
  else
    s = cudnnGetConvolutionBackwardFilterWorkspaceSize(handle(), pl.x, pl.y, pl.conv, pl.w,
                                                       static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes);
  return s == CUDNN_STATUS_SUCCESS ? bytes : 0;
}

Choice heuristic(const Plan& pl) {
  cudnnConvolutionFwdAlgoPerf_t f[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  cudnnConvolutionBwdDataAlgoPerf_t d[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  cudnnConvolutionBwdFilterAlgoPerf_t w[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int got = 0;
  if (pl.dir == Dir::forward) {
    check(cudnnGetConvolutionForwardAlgorithm_v7(handle(), pl.x, pl.w, pl.conv, pl.y,
                                                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, f),
          "cudnnGetConvolutionForwardAlgorithm_v7");
    return pick(f, got, pl.precision);
  }
  if (pl.dir == Dir::backward_data) {
    check(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle(), pl.w, pl.y, pl.conv, pl.x,
                                                      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, d),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    return pick(d, got, pl.precision);
  }
  check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle(), pl.x, pl.y, pl.conv, pl.w,
                                                      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, w),
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  return pick(w, got, pl.precision);
}

Choice benchmark_search(const Plan& pl, const void* in0, const void* in1, std::size_t out_bytes) {
  const int algos = pl.dir == Dir::forward         ? static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
                    : pl.dir == Dir::backward_data ? static_cast<int>(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)
                                                   : static_cast<int>(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
  std::size_t ws_bytes = 0;
  for (int a = 0; a < algos; ++a) {
    const std::size_t b = workspace_of(pl, a);
    if (b <= kMaxWorkspaceBytes && b > ws_bytes) ws_bytes = b;
  }
  fence();  // the inputs are ready
  const Temporary out(out_bytes), ws(ws_bytes);
  cudnnConvolutionFwdAlgoPerf_t f[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  cudnnConvolutionBwdDataAlgoPerf_t d[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  cudnnConvolutionBwdFilterAlgoPerf_t w[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int got = 0;
  Choice c;
  if (pl.dir == Dir::forward) {
    check(cudnnFindConvolutionForwardAlgorithmEx(handle(), pl.x, in0, pl.w, in1, pl.conv, pl.y, out.data, algos,
                                                 &got, f, ws.data, ws_bytes),
          "cudnnFindConvolutionForwardAlgorithmEx");
    c = pick(f, got, pl.precision);
  } else if (pl.dir == Dir::backward_data) {
    check(cudnnFindConvolutionBackwardDataAlgorithmEx(handle(), pl.w, in1, pl.y, in0, pl.conv, pl.x, out.data,
                                                      algos, &got, d, ws.data, ws_bytes),
          "cudnnFindConvolutionBackwardDataAlgorithmEx");
    c = pick(d, got, pl.precision);
  } else {
    check(cudnnFindConvolutionBackwardFilterAlgorithmEx(handle(), pl.x, in0, pl.y, in1, pl.conv, pl.w, out.data,
                                                        algos, &got, w, ws.data, ws_bytes),
          "cudnnFindConvolutionBackwardFilterAlgorithmEx");
    c = pick(w, got, pl.precision);
  }
  fence();
  return c;
}

}  // namespace hpct::nn::cudnn

#endif
