// The gradient-ready hook (Note [registration order], nn/parameters.hpp): during backward every
// model reports ranges of its gradient buffer that are final, in reverse order, covering the whole
// buffer exactly once, and each range holds its final values at the moment it is reported.
#include <gtest/gtest.h>

#include <vector>

#include "core/rng.hpp"
#include "models/diffusion/diffusion_net.hpp"
#include "models/mlp/mlp.hpp"

using namespace hpct;

namespace {

template <class V>
void fill_normal(const V& v, std::uint64_t key) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < h.span(); ++i) h.data()[i] = rng::normal(rng::hash(key, i));
  Kokkos::deep_copy(v, h);
}

struct Report {
  std::uint64_t offset, count;
  std::vector<double> values;  // the gradient range when it was reported
};

// Installs a recording hook; returns the reports after `backward` ran.
template <class Store, class Backward>
std::vector<Report> record(Store& store, Backward&& backward) {
  std::vector<Report> reports;
  store.set_ready_hook([&](std::uint64_t offset, std::uint64_t count) {
    fence();
    auto g = to_host(store.grads());
    reports.push_back({offset, count, std::vector<double>(g.data() + offset, g.data() + offset + count)});
  });
  store.zero_grads();
  backward();
  store.set_ready_hook(nullptr);
  return reports;
}

template <class Store>
void expect_reverse_cover_with_final_values(const Store& store, const std::vector<Report>& reports) {
  ASSERT_FALSE(reports.empty());
  auto g = to_host(store.grads());
  std::uint64_t end = store.count();
  for (const Report& r : reports) {
    EXPECT_EQ(r.offset + r.count, end) << "ranges must be contiguous and in reverse order";
    end = r.offset;
    for (std::uint64_t i = 0; i < r.count; ++i)
      ASSERT_EQ(r.values[i], g(r.offset + i)) << "gradient " << r.offset + i << " changed after it was reported";
  }
  EXPECT_EQ(end, 0u) << "the reports must cover the whole buffer";
}

}  // namespace

TEST(GradientReady, MlpReportsEveryLayerInReverseOrderWithFinalValues) {
  const int n = 6;
  Mlp<double> mlp(MlpConfig{5, 3, {7, 4}, nn::Activation::gelu}, n);
  mlp.store().initialize(3);
  View2<double> x("x", n, 5);
  fill_normal(x, 1);
  mlp.forward(x, n);
  fill_normal(View2<double>(mlp.output_grad()), 2);
  const auto reports = record(mlp.store(), [&] { mlp.backward(x, n); });
  EXPECT_EQ(reports.size(), 3u);  // one per Linear layer
  expect_reverse_cover_with_final_values(mlp.store(), reports);
}

TEST(GradientReady, DiffusionNetReportsEveryLayerInReverseOrderWithFinalValues) {
  DiffusionConfig c;
  c.n_context = 3, c.n_fine = 5, c.time_dim = 6, c.hidden = 7, c.depth = 2;
  const int n = 4;
  DiffusionNet<double> net(c, n);
  net.store().initialize(5);
  View2<double> x("x", n, c.n_fine), ctx("c", n, c.n_context);
  View1<double> t("t", n);
  fill_normal(x, 1), fill_normal(ctx, 2);
  Kokkos::deep_copy(t, 3.0);
  net.forward(x, ctx, t, n);
  fill_normal(View2<double>(net.output_grad()), 4);
  const auto reports = record(net.store(), [&] { net.backward(x, ctx, n); });
  EXPECT_EQ(reports.size(), 6u);  // output, hidden1, hidden0, input_proj, context_mlp, time_mlp
  expect_reverse_cover_with_final_values(net.store(), reports);
}
