// Note [gradient bounds]: Linear's recorded bounds prove its gradients finite only when they are,
// and the step's verdict (train::gradients_finite) is always optim::all_finite's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "nn/gradient_bounds.hpp"
#include "nn/layers/linear.hpp"
#include "optim/optimizer.hpp"
#include "train/step.hpp"

using namespace hpct;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(GradientBounds, MaxMagnitudeIsTheLargestOrInfinity) {
  namespace gb = nn::gradient_bounds;
  std::vector<float> v = {1.0f, -3.5f, -0.0f, std::numeric_limits<float>::denorm_min(), 2.0f};
  EXPECT_EQ(gb::max_magnitude(v.data(), 0), 0.0);
  EXPECT_EQ(gb::max_magnitude(v.data(), v.size()), 3.5);
  v.push_back(-std::numeric_limits<float>::max());
  EXPECT_EQ(gb::max_magnitude(v.data(), v.size()), static_cast<double>(std::numeric_limits<float>::max()));
  for (const float bad : {kInf, -kInf, kNaN, -kNaN}) {
    std::vector<float> w(37, 1.0f);
    w[20] = bad;
    EXPECT_EQ(gb::max_magnitude(w.data(), w.size()), std::numeric_limits<double>::infinity()) << bad;
  }
  const std::vector<double> d = {-2.0, std::nan("")};
  EXPECT_EQ(gb::max_magnitude(d.data(), 1), 2.0);
  EXPECT_EQ(gb::max_magnitude(d.data(), 2), std::numeric_limits<double>::infinity());
  EXPECT_EQ(gb::sum_bound(4, 0.0, std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
}

// One Linear (and one tensor nobody bounds) in a store; x and dy filled by the test.
struct BoundedLinear : ::testing::Test {
  static constexpr int kIn = 5, kOut = 3, kRows = 4;
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  nn::Linear<float> layer{store, ws, "fc", kIn, kOut, kRows};  // identity: dz is dy
  std::size_t other = store.add("other", {7}, nn::Init::constant_zero(), false);
  View2<float> xv{"x", kRows, kIn}, dyv{"dy", kRows, kOut};
  HostView2<float> xh{"xh", kRows, kIn}, dyh{"dyh", kRows, kOut};
  Tensor<float> x{xv}, dy{dyv};

  void SetUp() override {
    store.allocate(), ws.allocate(), layer.bind(store), store.initialize(1);
    fill();
  }
  void fill() {
    for (int i = 0; i < kRows; ++i) {
      for (int j = 0; j < kIn; ++j) xh(i, j) = 0.25f * static_cast<float>(i - j);
      for (int j = 0; j < kOut; ++j) dyh(i, j) = 0.5f - 0.125f * static_cast<float>(i + j);
    }
  }
  // A step's backward from zeroed gradients, with the bounds tracked; then the verdicts agree.
  bool step(int calls = 1) {
    Kokkos::deep_copy(xv, xh), Kokkos::deep_copy(dyv, dyh);
    store.zero_grads();
    store.track_gradient_bounds(true);
    store.reset_gradient_bounds();
    layer.forward(x, kRows);
    for (int k = 0; k < calls; ++k) layer.backward(x, dy, Tensor<float>(), nn::GradMode::assign, kRows);
    fence();
    store.track_gradient_bounds(false);
    const bool read = optim::all_finite<float>(store.grad_span());
    EXPECT_EQ(gradients_finite(store, store.grad_span()), read);
    return read;
  }
  bool proven() const { return store.gradient_proven_finite(0) && store.gradient_proven_finite(1); }
};

TEST_F(BoundedLinear, FiniteOperandsProveTheGradientsFinite) {
  EXPECT_TRUE(step());
  EXPECT_EQ(proven(), kHostBackend);
  EXPECT_FALSE(store.gradient_proven_finite(other));  // never declared: always read
  EXPECT_TRUE(step(3));                               // a layer applied several times: the bounds add up
  EXPECT_EQ(proven(), kHostBackend);
}

TEST_F(BoundedLinear, AnUnboundedTensorIsStillRead) {
  EXPECT_TRUE(step());
  auto g = Kokkos::create_mirror_view(store.grads());
  Kokkos::deep_copy(g, store.grads());
  g(store.tensors()[other].offset + 3) = kNaN;
  Kokkos::deep_copy(store.grads(), g);
  EXPECT_FALSE(gradients_finite(store, store.grad_span()));
  EXPECT_FALSE(optim::all_finite<float>(store.grad_span()));
}

TEST_F(BoundedLinear, HugeButFiniteInputFallsBackToTheRead) {
  // dW = sums of 4 products of at most 0.5 x 1e36: finite, but the bound 2e36 is above its limit
  // (FLT_MAX / 2^8, 1.3e36).
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kIn; ++j) xh(i, j) = 1e36f;
  EXPECT_TRUE(step());
  EXPECT_FALSE(store.gradient_proven_finite(0));
  EXPECT_EQ(store.gradient_proven_finite(1), kHostBackend);  // db does not see x
  // Larger: dW overflows to Inf, and the read says so.
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kIn; ++j) xh(i, j) = 3e38f;
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < kOut; ++j) dyh(i, j) = 10.0f;
  EXPECT_FALSE(step());
  EXPECT_FALSE(store.gradient_proven_finite(0));
}

TEST_F(BoundedLinear, NonFiniteOperandsAreNotFinite) {
  for (const float bad : {kInf, -kInf, kNaN}) {
    fill();
    dyh(2, 1) = bad;  // in dz
    EXPECT_FALSE(step()) << bad;
    EXPECT_FALSE(store.gradient_proven_finite(0));
    EXPECT_FALSE(store.gradient_proven_finite(1));
  }
  for (const float bad : {kInf, kNaN}) {
    fill();
    xh(1, 3) = bad;  // dz finite: x is read
    EXPECT_FALSE(step()) << bad;
    EXPECT_FALSE(proven());
  }
}

TEST(GradientBounds, NonFiniteInputWithZeroGradientIsNotFinite) {
  // dz = 0 and x = Inf: dW holds 0 x Inf = NaN, which no bound may hide.
  nn::ParameterStore<float> store;
  nn::Workspace<float> ws;
  nn::Linear<float> layer(store, ws, "fc", 2, 2, 2);
  store.allocate(), ws.allocate(), layer.bind(store), store.initialize(1);
  View2<float> xv("x", 2, 2), dyv("dy", 2, 2);
  auto xh = Kokkos::create_mirror_view(xv);
  xh(1, 0) = kInf;
  Kokkos::deep_copy(xv, xh);
  const Tensor<float> x(xv), dy(dyv);
  store.zero_grads();
  store.track_gradient_bounds(true);
  store.reset_gradient_bounds();
  layer.backward(x, dy, Tensor<float>(), nn::GradMode::assign, 2);
  fence();
  EXPECT_FALSE(store.gradient_proven_finite(0));
  EXPECT_EQ(store.gradient_proven_finite(1), kHostBackend);  // db = 0 + 0
  EXPECT_FALSE(optim::all_finite<float>(store.grad_span()));
  EXPECT_FALSE(gradients_finite(store, store.grad_span()));
}
}  // namespace
