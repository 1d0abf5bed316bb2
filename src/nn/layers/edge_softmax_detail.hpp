// Device-callable pieces shared by EdgeSoftmax's folded kernels (edge_softmax_rel.cpp) and their
// register-blocked host versions (edge_softmax_blocked.cpp): fixed-order dot products and axpys,
// and the attention-weight dropout draw (which the plain kernels, edge_softmax.cpp, take too).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/kokkos_compat.hpp"
#include "core/rng.hpp"

namespace hpct::nn::edge_detail {

// sum_c a[c] b[c] in 32 interleaved partial sums (four vector accumulators, so the FMA latency is
// hidden) added in a fixed tree: the compiler vectorises it without -ffast-math, and the order is
// the same on every thread count. Shorter rows (a head's D) take 8 lanes.
template <class S>
KOKKOS_INLINE_FUNCTION S dot_lanes(const S* a, const S* b, int n) {
  S acc[32] = {};
  int c = 0;
  for (; c + 32 <= n; c += 32)
    for (int l = 0; l < 32; ++l) acc[l] += a[c + l] * b[c + l];
  for (; c + 8 <= n; c += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[c + l] * b[c + l];
  for (int l = 0; l < 8; ++l) acc[l] = (acc[l] + acc[l + 8]) + (acc[l + 16] + acc[l + 24]);
  S s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; c < n; ++c) s += a[c] * b[c];
  return s;
}

template <class S>
KOKKOS_INLINE_FUNCTION void axpy(S w, const S* x, S* y, int n) {
  for (int c = 0; c < n; ++c) y[c] += w * x[c];
}

// Note [attention-weight dropout]'s draw, by value for the kernels: factor() is keep / (1 - p) or
// 0 for the edge of ordinal `ordinal` among destination i's incoming edges, head h of H. The
// keep test is Note [dropout by integer threshold] (dropout.cpp): the same bits as
// uniform(hash(key, keys(i), element)) >= p, and row(i) is the part of the hash that a
// destination's draws share.
template <class S>
struct DropDraw {
  bool on = false;
  double p = 0;
  std::uint64_t key = 0, threshold = 0;
  View1<std::uint64_t> keys;
  S inv_keep = S(1);
  KOKKOS_INLINE_FUNCTION std::uint64_t row(int i) const { return rng::hash(key, keys(i)); }
  KOKKOS_INLINE_FUNCTION S factor_in(std::uint64_t row_hash, int ordinal, int h, int H) const {
    const auto element = static_cast<std::uint64_t>(ordinal) * static_cast<std::uint64_t>(H) +
                         static_cast<std::uint64_t>(h);
    return (rng::mix(row_hash ^ element) >> 11) >= threshold ? inv_keep : S(0);
  }
  KOKKOS_INLINE_FUNCTION S factor(int i, int ordinal, int h, int H) const {
    return factor_in(row(i), ordinal, h, H);
  }
};

template <class S>
DropDraw<S> drop_draw(double p, std::uint64_t key, const View1<std::uint64_t>& keys, std::int64_t rows,
                      const std::string& name) {
  DropDraw<S> d;
  d.on = p > 0, d.p = p, d.key = key, d.keys = keys;
  d.inv_keep = d.on && p < 1 ? static_cast<S>(1.0 / (1.0 - p)) : S(d.on ? 0 : 1);
  d.threshold = p < 1 ? static_cast<std::uint64_t>(std::ceil(p * 9007199254740992.0)) : (std::uint64_t(1) << 53);
  if (d.on && static_cast<std::int64_t>(keys.extent(0)) < rows)
    throw Error("internal: " + name + ": attention dropout holds fewer keys than destinations");
  return d;
}

}  // namespace hpct::nn::edge_detail
