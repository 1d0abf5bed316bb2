// Note [register-blocked edge kernels] (nn/layers/edge_softmax_blocked.hpp): EdgeAttention in fp32
// with folded relative projections gives the same bits with the host's blocked per-edge kernels as
// with the generic ones: output, every input gradient and every parameter gradient, with
// attention-weight dropout and the shared edge norm, for head counts and widths that take each
// branch of the kernels (R a multiple of 32: the blocked dots; 16 only: the sums alone; head width a
// multiple of 16: the per-source key and value sums, by_source()).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "nn/layers/edge_attention.hpp"
#include "nn/layers/edge_softmax_blocked.hpp"

namespace hpct {
namespace {

using nn::GradMode;
using T = Tensor<float>;

void fill(float* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<float>(rng::normal(rng::hash(seed, i)));
}

std::vector<float> values(const float* p, std::size_t n) { return std::vector<float>(p, p + n); }

struct Result {
  std::vector<float> out, dxs, dxd, dr, grads, dgamma, dbeta;
};

Result run(int hidden, int heads, bool blocked, bool norm) {
  nn::edge_blocked::enabled() = blocked;
  const int ns = 23, nd = 31;
  std::vector<int> src, dst;
  for (int i = 0; i < nd; ++i) {  // destination 5 has no edge; others 1..16 edges, some repeated sources
    const int m = i == 5 ? 0 : 1 + static_cast<int>(rng::hash(3, static_cast<std::uint64_t>(i)) % 16);
    for (int o = 0; o < m; ++o)
      src.push_back(static_cast<int>(rng::hash(4, static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(o)) %
                                     ns)),
          dst.push_back(i);
  }
  const int ne = static_cast<int>(src.size());
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  nn::EdgeAttention<float>::Config c;
  c.hidden = hidden, c.heads = heads, c.head_dim = hidden / heads, c.has_r = true;
  c.max_edges = ne, c.max_src = ns, c.max_dst = nd;
  nn::EdgeAttention<float> attn(store, ws, "attn", c);
  const T &xs = ws.request("xs", ns, hidden), &xd = ws.request("xd", nd, hidden), &r = ws.request("r", ne, hidden);
  const T &dy = ws.request("dy", nd, hidden), &dxs = ws.request("dxs", ns, hidden);
  const T &dxd = ws.request("dxd", nd, hidden), &dr = ws.request("dr", ne, hidden);
  store.allocate(), ws.allocate();
  attn.bind(store);
  store.initialize(5);
  fill(store.params().data(), store.count(), 6);
  View1<float> nb("norm", 4 * static_cast<std::size_t>(hidden));
  fill(nb.data(), nb.extent(0), 7);
  if (norm) {
    nn::RelNorm<float> n;
    using V = nn::ParameterStore<float>::Vector;
    const auto h = static_cast<std::size_t>(hidden);
    n.gamma = V(nb.data(), h), n.beta = V(nb.data() + h, h), n.dgamma = V(nb.data() + 2 * h, h),
    n.dbeta = V(nb.data() + 3 * h, h);
    attn.set_rel_norm(n);
  }
  fill(xs.data(), xs.shape().size(), 8), fill(xd.data(), xd.shape().size(), 9),
      fill(r.data(), r.shape().size(), 10);
  fill(dy.data(), dy.shape().size(), 11), fill(dr.data(), dr.shape().size(), 12);  // dr accumulates onto this
  View1<std::uint64_t> keys("keys", nd);
  for (int i = 0; i < nd; ++i) keys(i) = rng::hash(13, static_cast<std::uint64_t>(i));
  attn.set_dropout(0.3, 14, keys);
  attn.set_edges(src, dst, ns, nd);
  store.zero_grads();
  attn.forward(xs, xd, r);
  attn.backward(xs, xd, r, dy, dxs, GradMode::assign, dxd, GradMode::assign, dr, GradMode::accumulate);
  Kokkos::fence();
  nn::edge_blocked::enabled() = true;
  Result res;
  res.out = values(attn.output().data(), static_cast<std::size_t>(nd) * hidden);
  res.dxs = values(dxs.data(), dxs.shape().size()), res.dxd = values(dxd.data(), dxd.shape().size());
  res.dr = values(dr.data(), dr.shape().size()), res.grads = values(store.grads().data(), store.count());
  res.dgamma = values(nb.data() + 2 * hidden, static_cast<std::size_t>(hidden));
  res.dbeta = values(nb.data() + 3 * hidden, static_cast<std::size_t>(hidden));
  return res;
}

TEST(EdgeBlockedKernels, SameBitsAsTheGenericKernels) {
  if (!kHostBackend || !nn::edge_blocked::usable(8, 64)) GTEST_SKIP() << "no blocked kernels in this build";
  const int shapes[][2] = {{64, 8}, {32, 4}, {48, 8}, {16, 2}, {32, 1}, {128, 8}, {64, 4}};
  for (const auto& s : shapes)
    for (const bool norm : {false, true}) {
      const Result a = run(s[0], s[1], true, norm), b = run(s[0], s[1], false, norm);
      const std::string what = "hidden " + std::to_string(s[0]) + ", heads " + std::to_string(s[1]) +
                               (norm ? ", shared norm" : "");
      EXPECT_EQ(a.out, b.out) << what;
      EXPECT_EQ(a.dxs, b.dxs) << what;
      EXPECT_EQ(a.dxd, b.dxd) << what;
      EXPECT_EQ(a.dr, b.dr) << what;
      EXPECT_EQ(a.grads, b.grads) << what;
      EXPECT_EQ(a.dgamma, b.dgamma) << what;
      EXPECT_EQ(a.dbeta, b.dbeta) << what;
    }
}

}  // namespace
}  // namespace hpct
