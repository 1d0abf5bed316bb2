// The fixed-order chunk sums of a Linear layer's parameter gradients (see linear_chunk_sums.hpp).
#include "nn/layers/linear_chunk_sums.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/error.hpp"

namespace hpct::nn {

// Note [fixed-order chunk sums]: under rank_invariant a chunk's gradient must have the same bits on
// whichever rank and in whichever micro-batch it runs (Note [rank invariance] in
// train/rank_invariant.cpp). For a model whose rows are independent (Model::rows_independent: the
// denoiser) a rank runs several chunks as one micro-batch (Note [fused chunks]), and then only the
// sums over rows are cut by chunk: each Linear's weight and bias gradients. Rather than a GEMM per
// chunk (over 8 rows at the seed-000 denoiser's default chunk: each writes the whole weight
// gradient, and the chunks' sum is one more pass over it), these sums are DEFINED by this kernel:
// element by element, chunk c's sum over its R rows in row order from +0, each product and sum
// rounded (nn's sources compile without FMA contraction, so a vectorised loop and its scalar
// remainder round alike; device code rounds the product explicitly); a rank's chunks of a tree step combined in the tree's order as they are
// computed (pairwise, in bit-reversed chunk order: the pending nodes of a binary counter, at most
// log2(64) + 1), and the element written once. Every element's arithmetic is a function of the
// chunk's rows alone, whatever the tile, the host thread or the device thread computes it, so a
// chunk has the same sums on any rank count, fused or not, as long as every micro-batch of such a
// model sums here (ParameterStore::fixed_order_gradients). Not the bits of a GEMM (whose blocking of
// the row sum is the library's), and not meant to be.
// Error bound: a sum of R products in float, |s - exact| <= (R + 1) 2^-24 sum_r |dz_r x_r| (R roundings
// of the sum, one per product; the GEMM's bound is the same with R its own depth), then the tree's
// log2(chunks) levels as in Note [rank invariance].
// Speed: host tiles of kRows output rows x kCols columns keep two chunks' running sums in vector
// registers (one load of x a row serves kRows rows of dz), a tree's first level is added there, and
// the weight gradient is written once, not read.
namespace {

constexpr int kPending = 7;  // log2(kMaxChunkTree) + 1
constexpr int kRows = 4, kCols = 32;

template <class Scalar>
struct Sums {
  const Scalar* dz;
  const Scalar* x;
  int out, in, rows, chunks;
  int bits;  // tree: log2(chunks); -1: a target per chunk
  Scalar* weight[kMaxChunkTree];
  Scalar* bias[kMaxChunkTree];
};

// acc + d x: one fused multiply-add (rounded once) on devices and on hosts whose build has FMA
// (x86-64 -march=native since Haswell, AArch64), else the product rounded, then the sum.
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
constexpr bool kHostFma = true;
#else
constexpr bool kHostFma = false;
#endif
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar madd(const Scalar d, const Scalar x, const Scalar acc) {
  static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>, "float or double");
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  if constexpr (std::is_same_v<Scalar, float>) return __fmaf_rn(d, x, acc);
  else return __fma_rn(d, x, acc);
#else
  if constexpr (kHostFma) return std::fma(d, x, acc);
  else return acc + d * x;
#endif
}

KOKKOS_INLINE_FUNCTION int bit_reversed(int t, int bits) {
  int r = 0;
  for (int b = 0; b < bits; ++b) r |= ((t >> b) & 1) << (bits - 1 - b);
  return r;
}

// Elements (o0 + a, i0 + b), a < R, b < C, of the weight gradient (kBias false) or bias elements
// o0 + a (kBias true, C = 1), for every chunk, into the targets.
template <int R, int C, bool kBias, class Scalar>
KOKKOS_INLINE_FUNCTION void sum_tile(const Sums<Scalar>& s, const int o0, const int i0) {
  const bool tree = s.bits >= 0;
  Scalar pending[kPending][R][C];
  int top = 0;
  for (int t = 0; t < s.chunks; ++t) {
    const int c = tree ? bit_reversed(t, s.bits) : t;
    Scalar acc[R][C];
    for (int a = 0; a < R; ++a)
      for (int b = 0; b < C; ++b) acc[a][b] = Scalar(0);
    for (int r = 0; r < s.rows; ++r) {
      const std::int64_t row = static_cast<std::int64_t>(c) * s.rows + r;
      const Scalar* const d = s.dz + row * s.out + o0;
      const Scalar* const xr = s.x + row * s.in + i0;
      for (int a = 0; a < R; ++a) {
        const Scalar da = d[a];
        for (int b = 0; b < C; ++b) acc[a][b] = kBias ? acc[a][b] + da : madd(da, xr[b], acc[a][b]);
      }
    }
    if (tree) {  // the nodes this chunk completes: pending node + the newer one, as node_of_slots adds them
      for (int u = t; u & 1; u >>= 1) {
        --top;
        for (int a = 0; a < R; ++a)
          for (int b = 0; b < C; ++b) acc[a][b] = pending[top][a][b] + acc[a][b];
      }
      for (int a = 0; a < R; ++a)
        for (int b = 0; b < C; ++b) pending[top][a][b] = acc[a][b];
      ++top;
      if (t + 1 < s.chunks) continue;
    }
    const int target = tree ? 0 : c;
    for (int a = 0; a < R; ++a) {
      Scalar* const dst = kBias ? s.bias[target] + o0 + a
                                : s.weight[target] + static_cast<std::int64_t>(o0 + a) * s.in + i0;
      for (int b = 0; b < C; ++b) dst[b] = (tree ? Scalar(0) : dst[b]) + acc[a][b];
    }
  }
}

// Host tiles, the running sums in vector registers: kind kWeight, kRows x kCols weight elements (vectorised along
// the columns: one load of x a row serves kRows rows of dz); kColumn, column i of kColumnRows rows
// (vectorised along the rows: narrow layers and the columns past the last full tile); kBias, the
// bias of kColumnRows rows (kBlock rows at the bottom edge). The same arithmetic per element as sum_tile.
enum class Tile { kWeight, kColumn, kBias };
constexpr int kColumnRows = 64;

// One row's step of a chunk's sums: acc = madd(d, x, acc), or from a literal 0 for the first row (a
// zeroed array there cost a memset of the tile per chunk, an eighth of the kernel).
template <Tile kKind, int R, int C, bool kFirst, class Scalar>
inline void host_step(const Sums<Scalar>& s, const std::int64_t row, const int o0, const int i0,
                      Scalar* __restrict__ acc) {
  const Scalar* __restrict__ const d = s.dz + row * s.out + o0;
  const Scalar* __restrict__ const xr = s.x + row * s.in + i0;
  if constexpr (kKind == Tile::kWeight) {
    for (int a = 0; a < R; ++a)
      for (int b = 0; b < C; ++b) acc[a * C + b] = madd(d[a], xr[b], kFirst ? Scalar(0) : acc[a * C + b]);
  } else if constexpr (kKind == Tile::kColumn) {
    const Scalar xv = xr[0];
    for (int a = 0; a < R; ++a) acc[a] = madd(d[a], xv, kFirst ? Scalar(0) : acc[a]);
  } else {
    for (int a = 0; a < R; ++a) acc[a] = (kFirst ? Scalar(0) : acc[a]) + d[a];
  }
}

// Chunks c0 and, when kPair, c1 of a tile, their running sums side by side in registers (twice the
// independent chains, and a tree step's first level never leaves them): into out0 and out1, or
// with `combine` their node, sums(c0) + sums(c1), into out0.
template <Tile kKind, int kBlock, bool kPair, class Scalar>
inline void host_pair(const Sums<Scalar>& s, const int c0, const int c1, const bool combine, const int o0,
                      const int i0, Scalar* __restrict__ out0, Scalar* __restrict__ out1) {
  constexpr int R = kKind == Tile::kWeight ? kRows : kBlock, C = kKind == Tile::kWeight ? kCols : 1;
  Scalar acc0[R * C], acc1[R * C];
  const std::int64_t row0 = static_cast<std::int64_t>(c0) * s.rows, row1 = static_cast<std::int64_t>(c1) * s.rows;
  host_step<kKind, R, C, true>(s, row0, o0, i0, acc0);
  if constexpr (kPair) host_step<kKind, R, C, true>(s, row1, o0, i0, acc1);
  for (int r = 1; r < s.rows; ++r) {
    host_step<kKind, R, C, false>(s, row0 + r, o0, i0, acc0);
    if constexpr (kPair) host_step<kKind, R, C, false>(s, row1 + r, o0, i0, acc1);
  }
  if (kPair && combine) {
    for (int e = 0; e < R * C; ++e) out0[e] = acc0[e] + acc1[e];
    return;
  }
  for (int e = 0; e < R * C; ++e) out0[e] = acc0[e];
  if constexpr (kPair)
    for (int e = 0; e < R * C; ++e) out1[e] = acc1[e];
}

// The tile at (o0, i0) for every chunk, two at a time: a tree's chunks t and t + 1 (t even) are the
// two halves of a first-level node (bit-reversed: c and c + chunks / 2), whose nodes then go through
// the pending nodes as sum_tile's leaves do; then the targets.
template <Tile kKind, int kBlock, class Scalar>
void host_tile(const Sums<Scalar>& s, const int o0, const int i0) {
  constexpr int R = kKind == Tile::kWeight ? kRows : kBlock, C = kKind == Tile::kWeight ? kCols : 1;
  constexpr int n = R * C;
  alignas(64) Scalar node[kPending + 1][n];
  const bool tree = s.bits >= 0;
  // Per chunk: target += sums. Tree: target = root + 0, the bits of adding it to the zeroed target
  // (a -0 root becomes +0) without reading the target.
  const auto put = [&](const Scalar* __restrict__ v, const int target, const bool onto_zero) {
    for (int a = 0; a < R; ++a) {
      Scalar* __restrict__ const dst = kKind == Tile::kBias
                                           ? s.bias[target] + o0 + a
                                           : s.weight[target] + static_cast<std::int64_t>(o0 + a) * s.in + i0;
      if (onto_zero)
        for (int b = 0; b < C; ++b) dst[b] = v[a * C + b] + Scalar(0);
      else
        for (int b = 0; b < C; ++b) dst[b] = dst[b] + v[a * C + b];
    }
  };
  if (s.chunks == 1) {
    host_pair<kKind, kBlock, false>(s, 0, 0, false, o0, i0, node[0], node[1]);
    put(node[0], 0, tree);
    return;
  }
  if (!tree) {
    int c = 0;
    for (; c + 1 < s.chunks; c += 2) {
      host_pair<kKind, kBlock, true>(s, c, c + 1, false, o0, i0, node[0], node[1]);
      put(node[0], c, false);
      put(node[1], c + 1, false);
    }
    if (c < s.chunks) {
      host_pair<kKind, kBlock, false>(s, c, c, false, o0, i0, node[0], node[1]);
      put(node[0], c, false);
    }
    return;
  }
  int top = 0;
  for (int t = 0; t < s.chunks; t += 2) {
    const int c = bit_reversed(t, s.bits);
    host_pair<kKind, kBlock, true>(s, c, c + s.chunks / 2, true, o0, i0, node[top], node[top + 1]);
    for (int u = t / 2; u & 1; u >>= 1) {  // pending node + the newer one
      --top;
      Scalar* __restrict__ const older = node[top];
      const Scalar* __restrict__ const newer = node[top + 1];
      for (int e = 0; e < n; ++e) older[e] = older[e] + newer[e];
    }
    ++top;
  }
  put(node[0], 0, true);
}

// Output rows [o0, o1) of one block of kBlock rows: full weight tiles, then the columns past the
// last full tile (narrow layers: all columns) and the bias as columns of kBlock rows.
template <int kBlock, class Scalar>
void host_block(const Sums<Scalar>& s, const int o) {
  int i = 0;
  for (; i + kCols <= s.in; i += kCols)
    for (int a = 0; a < kBlock; a += kRows) host_tile<Tile::kWeight, kRows>(s, o + a, i);
  for (; i < s.in; ++i) host_tile<Tile::kColumn, kBlock>(s, o, i);
  if (s.bias[0]) host_tile<Tile::kBias, kBlock>(s, o, 0);
}

// Output rows [o0, o1): blocks of kColumnRows rows, then of kRows, then single elements.
template <class Scalar>
void host_rows(const Sums<Scalar>& s, const int o0, const int o1) {
  int o = o0;
  for (; o + kColumnRows <= o1; o += kColumnRows) host_block<kColumnRows>(s, o);
  for (; o + kRows <= o1; o += kRows) host_block<kRows>(s, o);
  for (; o < o1; ++o) {
    for (int i = 0; i < s.in; ++i) sum_tile<1, 1, false>(s, o, i);
    if (s.bias[0]) sum_tile<1, 1, true>(s, o, 0);
  }
}

template <class Scalar>
void run_sums(const Sums<Scalar>& s) {
  if constexpr (kHostBackend) {
    const int tiles = (s.out + kColumnRows - 1) / kColumnRows;
    const long long parts = host_chunks(tiles, 2);
    for_each_host_chunk("chunk_sums", parts, [&s, tiles, parts](const int p) {
      const int o0 = static_cast<int>(tiles * p / parts) * kColumnRows;
      const int o1 = std::min(s.out, static_cast<int>(tiles * (p + 1) / parts) * kColumnRows);
      host_rows(s, o0, o1);
    });
  } else {
    const int width = s.in + 1;  // column `in`: the bias
    Kokkos::parallel_for(
        "chunk_sums", range(std::int64_t(0), static_cast<std::int64_t>(s.out) * width),
        KOKKOS_LAMBDA(const std::int64_t e) {
          const int o = static_cast<int>(e / width), i = static_cast<int>(e % width);
          if (i < s.in) sum_tile<1, 1, false>(s, o, i);
          else if (s.bias[0]) sum_tile<1, 1, true>(s, o, 0);
        });
  }
}

}  // namespace

bool linear_chunk_sums_fma() { return !kHostBackend || kHostFma; }

template <class Scalar>
void linear_chunk_sums(const Scalar* dz, const Scalar* x, int out, int in, int rows, int chunks, bool tree,
                       Scalar* const* weight, Scalar* const* bias) {
  if (rows <= 0 || chunks <= 0 || out <= 0) return;
  int bits = -1;
  if (tree)
    for (bits = 0; (1 << bits) < chunks;) ++bits;
  if (chunks > kMaxChunkTree || (tree && (1 << bits) != chunks))
    throw Error("internal: linear_chunk_sums: " + std::to_string(chunks) + " chunks" + (tree ? " in a tree" : ""));
  Sums<Scalar> s{};
  s.dz = dz, s.x = x;
  s.out = out, s.in = in, s.rows = rows, s.chunks = chunks, s.bits = bits;
  for (int c = 0; c < (tree ? 1 : chunks); ++c) {
    s.weight[c] = weight[c];
    s.bias[c] = bias ? bias[c] : nullptr;
  }
  run_sums(s);
}

template void linear_chunk_sums<float>(const float*, const float*, int, int, int, int, bool, float* const*,
                                       float* const*);
template void linear_chunk_sums<double>(const double*, const double*, int, int, int, int, bool, double* const*,
                                        double* const*);

}  // namespace hpct::nn
