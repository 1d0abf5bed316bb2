// Host micro-kernels for EdgeSoftmax's folded per-edge work (forward_rel, backward_rel): the R-long
// dot products and sums of every incoming edge of one destination, register-blocked with AVX-512.
//
// Note [register-blocked edge kernels]: per destination i and edge e the folded layer reads r_e
// [R] against H per-destination rows (qr_ih, gv_ih) and sums w_eh r_e into H rows (ragg_ih, rs_ih),
// and the backward forms dr_e = sum_h ds_eh qr_ih + w_eh gv_ih. Written as R-long dot_lanes/axpy
// calls per (edge, head), every axpy loads and stores its H R destination floats once per edge
// (3 memory operations per multiply-add) and r_e is read 2 H times; GCC kept the accumulators of
// plain loops on the stack. Here one 16-column chunk of all H rows lives in registers while the
// destination's edges stream past (r_e read once per chunk, dr_e written once), and head_dots()
// forms all H dots of one r_e in one pass. Every sum adds the same products in the same order as
// the plain loops (no FMA contraction: the library builds with -ffp-contract=off, and the
// intrinsics multiply then add), and head_dots() keeps dot_lanes()' 32 lanes and reduction tree,
// so results are the same bits as the generic kernels; test_attention_layers compares the two.
// Host builds with AVX-512 only (usable()); elsewhere the generic Kokkos kernels run.
#pragma once

#include <cstddef>

#if defined(__AVX512F__) && !defined(__CUDACC__)
#include <immintrin.h>
#define HPCT_EDGE_BLOCKED 1
#else
#define HPCT_EDGE_BLOCKED 0
#endif

namespace hpct::nn::edge_blocked {

// Whether the blocked kernels run (edge_softmax_rel.cpp, compiled for the host's CPU; the answer
// of this header's own macro in another file could differ): for this many heads and R.
bool usable(int heads, int R);
// Tests switch the blocked kernels off to compare them with the generic ones.
bool& enabled();
inline bool exact_dots(int R) { return R % 32 == 0; }

#if HPCT_EDGE_BLOCKED
// GCC 12's intrinsic headers fill the unused lanes of extracts and shuffles from _mm*_undefined_*,
// which its own -Wmaybe-uninitialized then reports at every inlined use: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

// dot_lanes()' final tree over its 32 lanes (a: lanes 0-15, b: lanes 16-31):
// x_l = (a_l + a_l+8) + (b_l + b_l+8), then ((x0 + x4) + (x1 + x5)) + ((x2 + x6) + (x3 + x7)).
inline __m256 halves_sum(__m512 a) {  // a_l + a_l+8, l < 8
  return _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_castps512_ps256(_mm512_shuffle_f32x4(a, a, 0xEE)));
}
inline float lane_tree(__m512 a, __m512 b) {
  const __m256 x = _mm256_add_ps(halves_sum(a), halves_sum(b));
  const __m128 y = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));  // x_l + x_l+4
  const __m128 u = _mm_add_ps(y, _mm_shuffle_ps(y, y, _MM_SHUFFLE(2, 3, 0, 1)));        // y0 + y1, y2 + y3
  return _mm_cvtss_f32(_mm_add_ss(u, _mm_movehl_ps(u, u)));
}

// out[h] = dot_lanes(z + h R, r, R) for h < H, bit for bit (R a multiple of 32).
template <int H>
inline void head_dots(const float* z, const float* r, int R, float* out) {
  __m512 a[H], b[H];
  for (int h = 0; h < H; ++h) a[h] = _mm512_setzero_ps(), b[h] = _mm512_setzero_ps();
  for (int c = 0; c < R; c += 32) {
    const __m512 r0 = _mm512_loadu_ps(r + c), r1 = _mm512_loadu_ps(r + c + 16);
    for (int h = 0; h < H; ++h) {
      a[h] = _mm512_add_ps(a[h], _mm512_mul_ps(_mm512_loadu_ps(z + h * R + c), r0));
      b[h] = _mm512_add_ps(b[h], _mm512_mul_ps(_mm512_loadu_ps(z + h * R + c + 16), r1));
    }
  }
  for (int h = 0; h < H; ++h) out[h] = lane_tree(a[h], b[h]);
}

// Over the n edges edges[0..n) of one destination, in that order, and 16 columns at a time:
//   y1[h R + c] = sum_o k1(e, h) r_e[c]        (k1(e, h) = k1[e H + h], r_e = r + e R)
//   y2[h R + c] = sum_o k2(e, h) r_e[c]        (kTwo)
//   dr_e[c] (=|+=) sum_h k1(e, h) z1[h R + c] + k2(e, h) z2[h R + c]   (kDr; += with acc_dr)
// y1, y2 are assigned (zero without edges).
template <int H, bool kTwo, bool kDr>
inline void edge_sums(const int* edges, int n, const float* r, int R, const float* k1, const float* k2, float* y1,
                      float* y2, const float* z1, const float* z2, float* dr, bool acc_dr) {
  for (int c = 0; c < R; c += 16) {
    __m512 s1[H], s2[H];
    for (int h = 0; h < H; ++h) {
      s1[h] = _mm512_setzero_ps();
      if (kTwo) s2[h] = _mm512_setzero_ps();
    }
    for (int o = 0; o < n; ++o) {
      const auto e = static_cast<std::size_t>(edges[o]);
      const __m512 rv = _mm512_loadu_ps(r + e * R + c);
      const float* w1 = k1 + e * H;
      const float* w2 = kTwo ? k2 + e * H : w1;
      __m512 d = _mm512_setzero_ps();
      if (kDr && acc_dr) d = _mm512_loadu_ps(dr + e * R + c);
      for (int h = 0; h < H; ++h) {
        const __m512 b1 = _mm512_set1_ps(w1[h]);
        s1[h] = _mm512_add_ps(s1[h], _mm512_mul_ps(b1, rv));
        if (kTwo) {
          const __m512 b2 = _mm512_set1_ps(w2[h]);
          s2[h] = _mm512_add_ps(s2[h], _mm512_mul_ps(b2, rv));
          if (kDr) {
            d = _mm512_add_ps(d, _mm512_mul_ps(b1, _mm512_loadu_ps(z1 + h * R + c)));
            d = _mm512_add_ps(d, _mm512_mul_ps(b2, _mm512_loadu_ps(z2 + h * R + c)));
          }
        }
      }
      if (kDr) _mm512_storeu_ps(dr + e * R + c, d);
    }
    for (int h = 0; h < H; ++h) {
      _mm512_storeu_ps(y1 + h * R + c, s1[h]);
      if (kTwo) _mm512_storeu_ps(y2 + h * R + c, s2[h]);
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // HPCT_EDGE_BLOCKED

}  // namespace hpct::nn::edge_blocked
