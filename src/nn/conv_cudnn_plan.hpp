// What the cuDNN path's plans and calls (conv_cudnn.cpp) and its choice of algorithm
// (conv_cudnn_search.cpp) share: a plan's descriptors and places, the handle, error checks (Note
// [cuDNN plans] in conv_cudnn.hpp). CUDA builds with cuDNN only.
#pragma once

#include "nn/conv_cudnn.hpp"

#if defined(HPCTRAIN_HAVE_CUDNN)
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace hpct::nn::cudnn {

// The largest workspace an algorithm may use (benchmark and heuristic alike): 512 MiB, as a bound
// that leaves the activations of a large model room on a 40 GB A100. Algorithms that need more are
// not considered.
constexpr std::size_t kMaxWorkspaceBytes = std::size_t(512) << 20;

enum class Dir : int { forward, backward_data, backward_weights };

inline void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw Error(std::string("cuDNN: ") + what + " failed: " + cudnnGetErrorString(s));
}
inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA: ") + what + " failed: " + cudaGetErrorString(e));
}

// One handle for the process on the one execution space instance's stream (conv_cudnn.cpp).
cudnnHandle_t handle();

struct Plan {
  Dir dir = Dir::forward;
  Precision precision = Precision::fp32;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  std::size_t workspace = 0;
  // Elements of the two inputs and the output, and (half runs) where their copies sit in the arena,
  // the workspace after them.
  std::int64_t count[3] = {0, 0, 0};
  std::size_t offset[4] = {0, 0, 0, 0};  // in0, in1, out (half), out widened (float)
  std::size_t workspace_offset = 0;
};

// The fields every cudnnConvolution*AlgoPerf_t has.
struct Choice {
  int algo = -1;
  float time = 0;
  std::size_t memory = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  int considered = 0;
};

// cuDNN's ranking without running anything (heuristic mode): the first algorithm that fits.
Choice heuristic(const Plan& pl);
// Benchmark mode: every algorithm timed on the call's own inputs (in0, in1: device arrays of the
// plan's precision), into a temporary output of out_bytes; the fastest that fits.
Choice benchmark_search(const Plan& pl, const void* in0, const void* in1, std::size_t out_bytes);
// The workspace algorithm `algo` needs for the plan (0 where cuDNN gives none).
std::size_t workspace_of(const Plan& pl, int algo);
// The algorithm's name in cuDNN's enum of that direction ("IMPLICIT_GEMM", "WINOGRAD", ...).
const char* algo_name(Dir d, int a);

}  // namespace hpct::nn::cudnn

#endif
