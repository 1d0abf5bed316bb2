// A Linear layer's weight and bias gradients under rank_invariant: per chunk of rows, the sum over
// the chunk's rows in one fixed order, and the chunks' sums combined in the fixed tree of
// train/rank_invariant.cpp, in registers, each gradient element written once (Note [fixed-order
// chunk sums] in linear_chunk_sums.cpp).
#pragma once

#include "core/kokkos_compat.hpp"

namespace hpct::nn {

// Chunks of one call at most (rank_invariant's kMaxTreeSlots: a tree step's chunks).
inline constexpr int kMaxChunkTree = 64;

// dz [chunks x rows, out] and x [chunks x rows, in], dense rows (leading dimensions out and in), in
// memory the kernels read. Chunk c's sums are, per weight element (o, i) and bias element o,
//   s_c(o, i) = (((0 + dz(cR, o) x(cR, i)) + dz(cR + 1, o) x(cR + 1, i)) + ...), R = rows,
//   s_c(o)    = (((0 + dz(cR, o)) + dz(cR + 1, o)) + ...),
// each step `s = s + d x` one fused multiply-add where linear_chunk_sums_fma() (the product rounded
// on its own otherwise).
// - tree false: weight[c][o in + i] += s_c(o, i) and bias[c][o] += s_c(o) for every chunk c.
// - tree true (chunks a power of two, at most kMaxChunkTree): weight[0] and bias[0] are SET to
//   0 + the root of the tree over the chunks whose node "c = a mod 2^j" is node "c = a mod 2^(j+1)"
//   plus node "c = a + 2^j mod 2^(j+1)" (rank_invariant's node of one rank's slots): what adding
//   it to zeroed targets gives, without reading them.
// bias may be null (no bias); weight and bias are host arrays of device pointers, `chunks` of them
// (tree false) or one (tree true). chunks <= kMaxChunkTree.
template <class Scalar>
void linear_chunk_sums(const Scalar* dz, const Scalar* x, int out, int in, int rows, int chunks, bool tree,
                       Scalar* const* weight, Scalar* const* bias);

// Whether the sums above are fused multiply-adds in this build (devices, and hosts built with FMA).
bool linear_chunk_sums_fma();

}  // namespace hpct::nn
