// Batched GEMMs over strided row-major operands, the batched variant of nn/gemm.hpp's entry point:
// C_b = alpha op(A_b) op(B_b) + beta C_b for every b = (o, i) in [0, outer) x [0, inner), where
// matrix b of an operand starts at data + o * outer_stride + i * inner_stride and its rows lie ld
// elements apart. Two batch levels address a head's columns of a [sequences * L, heads * d] tensor
// in place ((sequence, head) = (o, i): outer stride L * heads * d, inner stride d, ld heads * d), so
// attention needs no permuting copies. Host builds: one BLAS (or LIBXSMM) call per matrix,
// Note [batched GEMMs on host]; CUDA builds: cublas<S>gemmStridedBatched, one call per outer index.
// No allocation; each matrix is one GEMM with a fixed summation order (deterministic).
#pragma once

#include <cstdint>

namespace hpct::nn {

template <class Scalar>
struct Strided {
  Scalar* data = nullptr;
  int ld = 0;                                       // elements between rows
  std::int64_t outer_stride = 0, inner_stride = 0;  // elements between batch matrices
};

// m x n result, k the summed dimension, as gemm(); ta/tb 'N' or 'T'.
template <class Scalar>
void gemm_batched(char ta, char tb, int m, int n, int k, Scalar alpha, const Strided<const Scalar>& a,
                  const Strided<const Scalar>& b, Scalar beta, const Strided<Scalar>& c, int outer, int inner);

}  // namespace hpct::nn
