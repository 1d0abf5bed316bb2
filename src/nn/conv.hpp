// The one convolution entry point of nn (as nn/gemm.hpp is for GEMMs): 2-D convolution of NCHW
// tensors, forward and both backward passes, by a chosen algorithm:
//   gemm   -- im2col of a chunk of samples (one group) into a scratch matrix, then one GEMM
//             through nn/gemm.hpp (OpenBLAS / cuBLAS); a 1x1, stride-1, unpadded convolution on
//             one sample at a time skips im2col and multiplies the input itself (a "pointwise"
//             convolution is a plain GEMM). Note [convolution chunks]: small images make small
//             GEMMs (8x8 digits: 64 columns per sample), where a BLAS call costs more than its
//             arithmetic; so `batch_chunk` samples share one GEMM of batch_chunk x OH x OW columns,
//             its result permuted into NCHW by a kernel (and dy out of NCHW for the backward).
//   direct -- one Kokkos work item per output (forward), input (data gradient) or weight (weight
//             gradient) element, summing in a fixed order: no scratch, no GEMM.
//   onednn -- oneDNN's direct convolution primitives (nn/conv_onednn.hpp, Note [oneDNN plans]),
//             on host builds that found oneDNN; float only (oneDNN has no f64 convolution: double
//             tensors take the gemm path). Its own reordered copies, no scratch of ours.
//   cudnn  -- cuDNN 9 (nn/conv_cudnn.hpp, Note [cuDNN plans]) on CUDA builds that found it; float
//             only (double takes gemm); the one algorithm that computes in g.precision (Note [cuDNN
//             precision]): the others compute in fp32 whatever it says.
// Note [convolution without atomics]: the data gradient is a gather, not im2col's scatter (col2im):
// each input element sums the (kernel tap, output pixel) pairs that read it, so no two work items
// write one element, no float atomics are needed and the result does not depend on the thread count
// or backend. The weight gradient adds the samples in order (one GEMM per sample with beta = 1, or
// the direct kernel's fixed loop), so it is deterministic as well.
// Weights are [C_out, C_in / groups, KH, KW] (torch.nn.Conv2d's layout); no bias here (the layer adds it).
#pragma once

#include <cstdint>
#include <string>

#include "nn/precision.hpp"

namespace hpct::nn {

enum class ConvAlgorithm : std::uint8_t { gemm, direct, onednn, cudnn };
// Throws for an unknown name, and for "onednn" / "cudnn" in a build without oneDNN / cuDNN.
ConvAlgorithm conv_algorithm_from_name(const std::string& name);
const char* conv_algorithm_name(ConvAlgorithm a);
// The algorithms conv_algorithm auto times: gemm first (gemm, direct, and onednn where found) on
// host builds; cudnn alone on CUDA builds with cuDNN, whose benchmark mode times cuDNN's own
// algorithms per shape instead (Note [cuDNN plans]).
const ConvAlgorithm* conv_algorithms_available(int& count);
bool conv_algorithm_available(ConvAlgorithm a);
// conv_algorithm auto with conv_deterministic: cudnn (cuDNN's heuristic choice among deterministic
// algorithms) on CUDA builds with cuDNN, gemm elsewhere.
ConvAlgorithm conv_algorithm_deterministic();
// conv_algorithm library (the default): the build's convolution library by a fixed rule, no timing:
// cudnn (cuDNN's heuristic choice) on CUDA builds with cuDNN, onednn on host builds with oneDNN,
// gemm elsewhere. Note [the library by default] in nn/conv_tuning.hpp.
ConvAlgorithm conv_algorithm_library();
// How library algorithms choose theirs from now on (cudnn: benchmark mode or the heuristic, and
// deterministic algorithms only); conv_algorithm auto sets benchmark unless conv_deterministic.
void set_conv_search(bool benchmark, bool deterministic);
// The banner's line on the math libraries of this build: which library does GEMMs (and in which
// precision) and which convolution algorithms exist, with oneDNN's version where found.
std::string math_libraries_line();
// The host BLAS library nn/gemm.hpp calls ("libopenblas.so"); "cuBLAS" on GPU builds.
std::string gemm_library_name();

// A convolution's hyper-parameters and the input size they apply to; the output size follows.
struct ConvGeometry {
  int c_in = 1, h = 1, w = 1, c_out = 1;
  int kh = 1, kw = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  int batch_chunk = 1;                    // samples per GEMM (Note [convolution chunks])
  Precision precision = Precision::fp32;  // compute type of the cudnn algorithm (the others: fp32)
  // Note [blocked activations] (nn/conv_onednn.hpp): the memory layout of x (layout_in) and y
  // (layout_out) and of their gradients: 0 for NCHW, 16 for oneDNN's nChw16c (onednn algorithm only).
  int layout_in = 0, layout_out = 0;

  int oh() const { return (h + 2 * pad_h - dil_h * (kh - 1) - 1) / stride_h + 1; }
  int ow() const { return (w + 2 * pad_w - dil_w * (kw - 1) - 1) / stride_w + 1; }
  int cin_g() const { return c_in / groups; }    // input channels per group
  int cout_g() const { return c_out / groups; }  // output channels per group
  // Rows of one group's im2col matrix (a weight row's length): C_in/groups x KH x KW.
  int col_rows() const { return cin_g() * kh * kw; }
  std::int64_t in_pixels() const { return static_cast<std::int64_t>(h) * w; }
  std::int64_t out_pixels() const { return static_cast<std::int64_t>(oh()) * ow(); }
  // The input itself is the im2col matrix: 1x1 kernel, stride 1, no padding.
  bool pointwise() const {
    return kh == 1 && kw == 1 && stride_h == 1 && stride_w == 1 && pad_h == 0 && pad_w == 0;
  }
  // Elements of the im2col scratch the gemm algorithm needs (0 when pointwise, one sample a time).
  std::int64_t col_size() const {
    return pointwise() && batch_chunk == 1 ? 0 : static_cast<std::int64_t>(col_rows()) * out_pixels() * batch_chunk;
  }
  // Elements of the GEMM result of a chunk before its permutation into NCHW (0 for one sample).
  std::int64_t tmp_size() const {
    return batch_chunk > 1 ? static_cast<std::int64_t>(cout_g()) * out_pixels() * batch_chunk : 0;
  }
  std::int64_t scratch_size() const { return col_size() + tmp_size(); }
  // The chunk for a budget of scratch elements: as many samples as fit, at least 1, at most `capacity`.
  static int chunk_for(std::int64_t per_sample, std::int64_t budget, int capacity);
  // Multiply-adds of one sample's forward pass.
  double macs_per_sample() const {
    return static_cast<double>(c_out) * col_rows() * static_cast<double>(out_pixels());
  }
  // Throws hpct::Error naming `what` when the sizes do not make a convolution.
  void validate(const std::string& what) const;
  std::string to_string() const;  // "3x8x8 -> 16x4x4, 3x3/2 pad 1"
};

// y[0, n) = conv(x, w): x [n, C_in, H, W], w [C_out, C_in/groups, KH, KW], y [n, C_out, OH, OW]
// (assigned). scratch: at least g.scratch_size() elements (gemm only; may be null otherwise).
template <class Scalar>
void conv2d_forward(const ConvGeometry& g, ConvAlgorithm alg, const Scalar* x, const Scalar* w, Scalar* y,
                    Scalar* scratch, int n);

// dx = (or +=, when accumulate) conv^T(dy, w): the gradient with respect to the input.
template <class Scalar>
void conv2d_backward_data(const ConvGeometry& g, ConvAlgorithm alg, const Scalar* dy, const Scalar* w, Scalar* dx,
                          Scalar* scratch, bool accumulate, int n);

// dw += the gradient with respect to the weights (samples added in order).
template <class Scalar>
void conv2d_backward_weights(const ConvGeometry& g, ConvAlgorithm alg, const Scalar* x, const Scalar* dy,
                             Scalar* dw, Scalar* scratch, int n);

}  // namespace hpct::nn
