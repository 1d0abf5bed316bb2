// The cuDNN convolution path behind nn/conv.hpp (ConvAlgorithm::cudnn): CUDA builds that found
// cuDNN (HPCTRAIN_HAVE_CUDNN), float tensors, computed in fp32 or in bf16/fp16 with fp32
// accumulation. nn/conv.cpp, conv_algorithms.cpp and the Conv2d layer call these; nothing else
// should.
// Note [cuDNN plans]: a plan (tensor, filter and convolution descriptors, the algorithm, its
// workspace size and the places of the half-precision copies) is built on the first call for its
// key (geometry, batch size, direction, precision, search mode) and kept for the process; later
// calls only enqueue cuDNN on the stream of the one execution space instance (Note [one execution
// space instance]). All plans share one device arena (workspace + half copies), grown only when a
// plan is built, so nothing is allocated in a step after the first one per shape. The algorithm:
//   benchmark (conv_algorithm auto) -- cudnnFind*AlgorithmEx times every algorithm cuDNN has on
//             this shape, once, with a temporary workspace of up to kFindWorkspaceBytes and a
//             temporary output (the caller's dx / dw are accumulated into and must not be touched),
//             and the fastest is kept, as torch.backends.cudnn.benchmark does;
//   heuristic (conv_algorithm cudnn, or auto with conv_deterministic) -- cuDNN's own ranking
//             (cudnnGet*Algorithm_v7), the first that fits: a fixed choice for a GPU and cuDNN version.
// `deterministic` (conv_deterministic true) keeps only algorithms cuDNN reports as deterministic
// (as torch.backends.cudnn.deterministic). Each choice is logged once per plan. Benchmark choices
// may differ between ranks (timing noise); the gradients are averaged over the ranks all the same,
// so weights stay equal on every rank, but 1 rank == N ranks bitwise needs conv_deterministic.
// Note [cuDNN precision]: fp32 runs use CUDNN_FMA_MATH, i.e. no TF32 (PyTorch's default allows it
// for convolutions): the results are within float rounding of the gemm path. bf16/fp16 runs convert
// x, w and dy to half patterns in the arena (nn/gemm.hpp's to_half_bits), run cuDNN with half
// tensors and fp32 compute (PSEUDO_HALF / PSEUDO_BFLOAT16 configs) on tensor cores
// (CUDNN_TENSOR_OP_MATH), and widen the half result into the fp32 output (added where the caller
// accumulates); this is autocast's convolution, whose outputs and gradients are rounded to the
// compute type, and what Note [low precision on host builds] emulates.
#pragma once

#include <cstddef>
#include <string>

#include "nn/conv.hpp"
#include "nn/precision.hpp"

namespace hpct::nn::cudnn {

// True when this build has the cuDNN path (a CUDA build that found cuDNN).
bool available();
// "cuDNN 9.19.0" (the library loaded at run time) or "" when not built in.
std::string version();
// Plans built so far in this process (tests: none after a warm-up step).
std::size_t plans_built();
// The search mode of plans built from now on (Note [cuDNN plans]); benchmark off by default.
void set_search(bool benchmark, bool deterministic);
bool benchmark();
bool deterministic();

// As conv2d_forward / backward_data / backward_weights (nn/conv.hpp) in precision p (fp32, bf16 or
// fp16; Note [cuDNN precision]); the arrays are device arrays of the default memory space.
void forward(const ConvGeometry& g, Precision p, const float* x, const float* w, float* y, int n);
void backward_data(const ConvGeometry& g, Precision p, const float* dy, const float* w, float* dx, bool accumulate,
                   int n);
void backward_weights(const ConvGeometry& g, Precision p, const float* x, const float* dy, float* dw,
                      int n);  // dw +=

}  // namespace hpct::nn::cudnn
