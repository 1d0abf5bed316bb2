// Register-blocked host versions of EdgeSoftmax's folded per-destination loops (Note
// [register-blocked edge kernels], edge_softmax_blocked.hpp).
#include "nn/layers/edge_softmax_blocked.hpp"

#include <cstddef>
#include <type_traits>

#include "nn/elementwise.hpp"

#if defined(__AVX512F__) && !defined(__CUDACC__)
#include <immintrin.h>
#define HPCT_EDGE_BLOCKED 1
#else
#define HPCT_EDGE_BLOCKED 0
#endif

namespace hpct::nn::edge_blocked {

bool& enabled() {
  static bool on = true;
  return on;
}

bool usable(int heads, int R) {
  return HPCT_EDGE_BLOCKED && enabled() && (heads == 1 || heads == 2 || heads == 4 || heads == 8) && R % 16 == 0 &&
         R > 0 && R <= kMaxR;
}

bool source_usable(int heads, int D) {
  const int hd = heads * D;
  return HPCT_EDGE_BLOCKED && enabled() && D > 0 && D % 16 == 0 && (hd == 16 || hd == 32 || hd == 64 || hd == 128);
}

#if HPCT_EDGE_BLOCKED
namespace {

using edge_detail::axpy;
using edge_detail::dot_lanes;
using Drop = edge_detail::DropDraw<float>;

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
// y1, y2 are assigned (zero without edges). With gamma, y1 is stored as gamma[c] y1 + beta[c]
// count[h], affine_sums()' expression in edge_softmax_rel.cpp (the same bits, and no pass of its
// own over the [destinations, H R] rows).
template <int H, bool kTwo, bool kDr>
inline void edge_sums(const int* edges, int n, const float* r, int R, const float* k1, const float* k2, float* y1,
                      float* y2, const float* z1, const float* z2, float* dr, bool acc_dr,
                      const float* gamma = nullptr, const float* beta = nullptr, const float* count = nullptr) {
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
    if (gamma) {  // multiply, then add: no contraction, as affine_sums()
      const __m512 gv = _mm512_loadu_ps(gamma + c), bv = _mm512_loadu_ps(beta + c);
      for (int h = 0; h < H; ++h)
        s1[h] = _mm512_add_ps(_mm512_mul_ps(gv, s1[h]), _mm512_mul_ps(bv, _mm512_set1_ps(count[h])));
    }
    for (int h = 0; h < H; ++h) {
      _mm512_storeu_ps(y1 + h * R + c, s1[h]);
      if (kTwo) _mm512_storeu_ps(y2 + h * R + c, s2[h]);
    }
  }
}


// The r side of one destination's scores: t[h] = z_h . r, as dot_lanes() sums it (head_dots needs
// R a multiple of 32; else dot_lanes itself).
template <int H>
inline void rel_dots(const float* z, const float* r, int R, float* t) {
  if (R % 32 == 0) {
    head_dots<H>(z, r, R, t);
  } else {
    for (int h = 0; h < H; ++h) t[h] = dot_lanes(z + h * R, r, R);
  }
}

// dot_lanes() and axpy() over one head's D columns, with SMART's D = 16 as a constant so the
// compiler unrolls them into a few vector operations: the same function, so the same operations
// in the same order (the same bits) as with D at run time.
inline float head_dot(const float* a, const float* b, int D) {
  return D == 16 ? dot_lanes(a, b, 16) : dot_lanes(a, b, D);
}
inline void head_axpy(float w, const float* x, float* y, int D) {
  if (D == 16) axpy(w, x, y, 16);
  else axpy(w, x, y, D);
}

// Note [shared norm scaled in the kernel]: zs[h R + k] = z[h R + k] * gamma[k] and, with c, c[h] =
// z_h . beta by dot_lanes(), as scale_heads() in edge_softmax_rel.cpp forms them.
template <int H>
inline void scale_rows(const float* z, const float* gamma, const float* beta, int R, float* zs, float* c) {
  for (int h = 0; h < H; ++h) {
    const float* zh = z + h * R;
    if (c) c[h] = dot_lanes(zh, beta, R);
    for (int k = 0; k < R; ++k) zs[h * R + k] = zh[k] * gamma[k];
  }
}

// Every line but the R-long work as the generic kernel in edge_softmax_rel.cpp.
template <int H>
void forward_heads(int nd, const FwArgs& p, const Drop& dd) {
  const bool drop = dd.on;
  Kokkos::parallel_for("edge_rel_fwb", host_range(0, nd), [=](const int i) {
    const int D = p.D, R = p.R, HD = H * D, begin = p.offsets[i], n = p.offsets[i + 1] - begin;
    const int* es = p.order + begin;
    const std::size_t iHD = static_cast<std::size_t>(i) * HD, iH = static_cast<std::size_t>(i) * H;
    const float* qri = p.qr + static_cast<std::size_t>(i) * H * R;
    alignas(64) float qs[H * kMaxR];
    float cst[H] = {};
    if (p.affine) scale_rows<H>(qri, p.gamma, p.beta, R, qs, cst), qri = qs;
    float* out = p.out + iHD;
    float* wsum = p.wsum + iH;
    float t[H];
    for (int o = 0; o < n; ++o) {
      const auto e = static_cast<std::size_t>(es[o]), j = static_cast<std::size_t>(p.src[e]);
      rel_dots<H>(qri, p.r + e * R, R, t);
      for (int h = 0; h < H; ++h)
        p.a[e * H + h] = p.scale *
                         (head_dot(p.q + iHD + h * D, p.k + j * HD + h * D, D) + t[h] + (p.affine ? cst[h] : 0.0f));
    }
    // Note [head-inner softmax loops]: the softmax and the dropout draw of one destination run
    // over its edges with the H heads innermost (a[e H + h] is contiguous in h), so they vectorise
    // across heads; each head's max, sum and weights see the same operations in the same edge
    // order as the generic kernel's head-outer loops (the same bits).
    float m[H], sum[H];
    for (int h = 0; h < H; ++h) m[h] = 0.0f, sum[h] = 0.0f;
    for (int o = 0; o < n; ++o) {
      const float* ae = p.a + static_cast<std::size_t>(es[o]) * H;
      for (int h = 0; h < H; ++h) m[h] = o == 0 || ae[h] > m[h] ? ae[h] : m[h];
    }
    for (int o = 0; o < n; ++o) {
      float* ae = p.a + static_cast<std::size_t>(es[o]) * H;
      for (int h = 0; h < H; ++h) {
        const float e = exp_vectorisable(ae[h] - m[h]);
        ae[h] = e;
        sum[h] += e;
      }
    }
    for (int o = 0; o < n; ++o) {
      float* ae = p.a + static_cast<std::size_t>(es[o]) * H;
      for (int h = 0; h < H; ++h) ae[h] = ae[h] / sum[h];
    }
    for (int h = 0; h < H; ++h) wsum[h] = 0.0f;
    for (int c = 0; c < HD; ++c) out[c] = 0.0f;
    const std::uint64_t drow = drop ? dd.row(i) : 0;
    for (int o = 0; o < n; ++o) {
      const auto e = static_cast<std::size_t>(es[o]), j = static_cast<std::size_t>(p.src[e]);
      const float* ae = p.a + e * H;
      float* we = p.wd + e * H;
      if (drop) {
        for (int h = 0; h < H; ++h) we[h] = ae[h] * dd.factor_in(drow, o, h, H);
      } else {
        for (int h = 0; h < H; ++h) we[h] = ae[h];
      }
      for (int h = 0; h < H; ++h) wsum[h] += we[h];
      for (int h = 0; h < H; ++h) head_axpy(we[h], p.v + j * HD + h * D, out + h * D, D);
    }
    edge_sums<H, false, false>(es, n, p.r, R, p.wd, nullptr, p.ragg + static_cast<std::size_t>(i) * H * R, nullptr,
                               nullptr, nullptr, nullptr, false, p.affine ? p.gamma : nullptr, p.beta, wsum);
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) out[h * D + d] += p.bv[h * D + d] * wsum[h];
  });
  fence();
}

template <int H>
void backward_heads(int nd, const BwArgs& p, const Drop& dd) {
  const bool drop = dd.on;
  Kokkos::parallel_for("edge_rel_bwb", host_range(0, nd), [=](const int i) {
    const int D = p.D, R = p.R, HD = H * D, begin = p.offsets[i], n = p.offsets[i + 1] - begin;
    const int* es = p.order + begin;
    const std::size_t iHD = static_cast<std::size_t>(i) * HD, iHR = static_cast<std::size_t>(i) * H * R;
    const float *gi = p.g + iHD, *gvi = p.gv + iHR, *qri = p.qr + iHR;
    alignas(64) float qs[H * kMaxR], gs[H * kMaxR];
    float gc[H] = {};  // gv . beta
    if (p.affine) scale_rows<H>(qri, p.gamma, p.beta, R, qs, nullptr), qri = qs;
    if (p.affine) scale_rows<H>(gvi, p.gamma, p.beta, R, gs, gc), gvi = gs;
    float* cst = p.cst + static_cast<std::size_t>(i) * H;
    float* rowdot = p.rowdot + static_cast<std::size_t>(i) * H;
    float gb[H], t[H], dots[H], rd[H];  // rd: rowdot, stored at the end
    for (int h = 0; h < H; ++h) rd[h] = 0.0f, gb[h] = head_dot(gi + h * D, p.bv + h * D, D);
    const std::uint64_t drow = drop ? dd.row(i) : 0;
    // Note [head-inner softmax loops] (forward_heads): the per-(edge, head) scalars with the heads
    // innermost, the same operations in the same edge order per head.
    for (int o = 0; o < n; ++o) {
      const auto e = static_cast<std::size_t>(es[o]), j = static_cast<std::size_t>(p.src[e]);
      rel_dots<H>(gvi, p.r + e * R, R, t);
      for (int h = 0; h < H; ++h) dots[h] = head_dot(gi + h * D, p.v + j * HD + h * D, D);
      const float* ae = p.a + e * H;
      float* dse = p.ds + e * H;
      for (int h = 0; h < H; ++h) {
        float da = dots[h] + t[h] + gb[h] + (p.affine ? gc[h] : 0.0f);
        da = drop ? da * dd.factor_in(drow, o, h, H) : da;
        dse[h] = da;
        rd[h] += ae[h] * da;
      }
    }
    for (int h = 0; h < H; ++h) rowdot[h] = rd[h];
    float* dqi = p.dq + iHD;
    if (p.want_dq && !p.acc_q)
      for (int c = 0; c < HD; ++c) dqi[c] = 0.0f;
    float sds[H] = {};  // sum_e ds, into cst with the shared norm
    for (int o = 0; o < n; ++o) {
      const auto e = static_cast<std::size_t>(es[o]), j = static_cast<std::size_t>(p.src[e]);
      const float* ae = p.a + e * H;
      float* dse = p.ds + e * H;
      float dsv[H];
      for (int h = 0; h < H; ++h) dsv[h] = p.scale * ae[h] * (dse[h] - rd[h]);
      for (int h = 0; h < H; ++h) dse[h] = dsv[h], sds[h] += dsv[h];
      if (p.want_dq)
        for (int h = 0; h < H; ++h) head_axpy(dsv[h], p.k + j * HD + h * D, dqi + h * D, D);
    }
    if (p.affine)
      for (int h = 0; h < H; ++h) cst[h] = sds[h];
    const float* w = drop ? p.wd : p.a;
    if (p.want_dr)
      edge_sums<H, true, true>(es, n, p.r, R, p.ds, w, p.rs + iHR, p.ragg + iHR, qri, gvi, p.dr, p.acc_r);
    else
      edge_sums<H, true, false>(es, n, p.r, R, p.ds, w, p.rs + iHR, p.ragg + iHR, nullptr, nullptr, nullptr, false);
  });
  fence();
}

// f(std::integral_constant<int, H>) for the head counts usable() accepts.
template <class F>
void by_heads(int H, const F& f) {
  if (H == 1) f(std::integral_constant<int, 1>());
  else if (H == 2) f(std::integral_constant<int, 2>());
  else if (H == 4) f(std::integral_constant<int, 4>());
  else f(std::integral_constant<int, 8>());
}

template <int NC>
void by_source_chunks(int ns, const SrcArgs& p) {
  Kokkos::parallel_for("edge_rel_srcb", host_range(0, ns), [=](const int j) {
    constexpr int HD = 16 * NC;
    const int H = HD / p.D, per_head = p.D / 16;
    __m512 ak[NC], av[NC];
    for (int c = 0; c < NC; ++c) ak[c] = _mm512_setzero_ps(), av[c] = _mm512_setzero_ps();
    for (int o = p.offsets[j]; o < p.offsets[j + 1]; ++o) {
      const auto e = static_cast<std::size_t>(p.order[o]), i = static_cast<std::size_t>(p.dst[e]);
      const float *qi = p.q + i * HD, *gi = p.g + i * HD;
      for (int c = 0; c < NC; ++c) {  // multiply, then add: axpy's y += w x without contraction
        const std::size_t eh = e * H + c / per_head;
        if (p.want_dk)
          ak[c] = _mm512_add_ps(ak[c], _mm512_mul_ps(_mm512_set1_ps(p.ds[eh]), _mm512_loadu_ps(qi + 16 * c)));
        if (p.want_dv)
          av[c] = _mm512_add_ps(av[c], _mm512_mul_ps(_mm512_set1_ps(p.w[eh]), _mm512_loadu_ps(gi + 16 * c)));
      }
    }
    const auto jHD = static_cast<std::size_t>(j) * HD;
    for (int c = 0; c < NC; ++c) {
      if (p.want_dk) _mm512_storeu_ps(p.dk + jHD + 16 * c, ak[c]);
      if (p.want_dv) _mm512_storeu_ps(p.dv + jHD + 16 * c, av[c]);
    }
  });
  fence();
}

}  // namespace

void by_source(int ns, int H, const SrcArgs& p) {
  const int chunks = H * p.D / 16;
  if (chunks == 1) by_source_chunks<1>(ns, p);
  else if (chunks == 2) by_source_chunks<2>(ns, p);
  else if (chunks == 4) by_source_chunks<4>(ns, p);
  else by_source_chunks<8>(ns, p);
}

void forward(int nd, int H, const FwArgs& p, const Drop& dd) {
  by_heads(H, [&](auto heads) { forward_heads<decltype(heads)::value>(nd, p, dd); });
}
void backward(int nd, int H, const BwArgs& p, const Drop& dd) {
  by_heads(H, [&](auto heads) { backward_heads<decltype(heads)::value>(nd, p, dd); });
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
void by_source(int, int, const SrcArgs&) {
  throw Error("internal: edge_blocked::by_source without the blocked kernels (source_usable() is false)");
}
void forward(int, int, const FwArgs&, const edge_detail::DropDraw<float>&) {
  throw Error("internal: edge_blocked::forward without the blocked kernels (usable() is false)");
}
void backward(int, int, const BwArgs&, const edge_detail::DropDraw<float>&) {
  throw Error("internal: edge_blocked::backward without the blocked kernels (usable() is false)");
}
#endif

}  // namespace hpct::nn::edge_blocked
#undef HPCT_EDGE_BLOCKED  // a CUDA batch goes on with other files (Note [CUDA batches])
