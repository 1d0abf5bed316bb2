// Unit tests of the GBDT pieces: binning, the histogram kernel (exact, any thread count) and
// sibling subtraction (split gain and default direction: test_gbdt_split.cpp; AUC: test_gbdt_metrics.cpp;
// the text inputs: test_gbdt_input.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "gbdt/binning.hpp"
#include "gbdt/histogram.hpp"
#include "gbdt/objective.hpp"
#include "gbdt/packed.hpp"
#include "gbdt/split.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

TEST(GbdtBinning, FewDistinctValuesGetOwnBinsAndRuleMatchesThresholds) {
  std::vector<float> v = {-1.5f, -1.5f, 0.0f, 0.25f, 0.25f, 3.0f};
  const auto cuts = cuts_from_sorted(v, 255);
  ASSERT_EQ(cuts.size(), 4u);  // four distinct values, the last bin is closed by FLT_MAX
  EXPECT_EQ(cuts.back(), FLT_MAX);
  BinCuts bc;
  bc.upper = {cuts};
  bc.finish();
  EXPECT_EQ(bc.nan_bin(0), 4);
  EXPECT_EQ(bc.bin_of(0, NAN), 4);
  EXPECT_EQ(bc.bin_of(0, -1.5f), 0);
  EXPECT_EQ(bc.bin_of(0, 0.0f), 1);
  EXPECT_EQ(bc.bin_of(0, 0.25f), 2);
  EXPECT_EQ(bc.bin_of(0, INFINITY), 3);
  EXPECT_EQ(bc.bin_of(0, -INFINITY), 0);
  // The model file's rule: bin_of(x) <= b exactly when x <= upper[b].
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> U(-3, 4);
  for (int i = 0; i < 2000; ++i) {
    const float x = i % 3 ? U(gen) : v[static_cast<std::size_t>(i) % v.size()];
    for (int b = 0; b < 4; ++b) EXPECT_EQ(bc.bin_of(0, x) <= b, x <= cuts[static_cast<std::size_t>(b)]);
  }
}

// bin_matrix (the padded-table search over blocks of rows) agrees with bin_of everywhere: features
// with 1, 2 and 255 value bins; values on the cuts, between them, infinite, NaN, -0.
TEST(GbdtBinning, RadixSortEqualsStdSort) {
  std::vector<float> v;
  for (int i = 0; i < 5000; ++i) {
    const auto k = rng::hash(12, static_cast<std::uint64_t>(i));
    v.push_back(static_cast<float>(static_cast<double>(k % 2000001) - 1e6) * (k % 7 == 0 ? 1e-30f : 1e-3f));
  }
  v.insert(v.end(), {0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 1.0f, 1.0f});
  std::vector<float> a = v, b = v;
  sort_floats(a);
  std::sort(b.begin(), b.end());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << i;  // -0 == +0
  for (std::size_t i = 1; i < a.size(); ++i)
    EXPECT_FALSE(std::signbit(a[i - 1]) == false && std::signbit(a[i]) && a[i] == 0.0f);  // -0 first
}

TEST(GbdtBinning, MatrixBinningEqualsBinOf) {
  std::mt19937 gen(11);
  std::normal_distribution<float> N(0, 2);
  BinCuts bc;
  bc.upper.push_back({FLT_MAX});
  bc.upper.push_back({0.0f, FLT_MAX});
  std::vector<float> many;
  for (int i = 0; i < 254; ++i) many.push_back(-5.0f + 0.04f * static_cast<float>(i));
  many.push_back(FLT_MAX);
  bc.upper.push_back(many);
  bc.finish();
  const int F = 3;
  const long long n = 3001;  // not a multiple of the row block
  std::vector<float> x(static_cast<std::size_t>(n) * F);
  const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, FLT_MAX, -FLT_MAX, -5.0f, 5.16f};
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float cut = many[static_cast<std::size_t>(gen() % 254)];
    x[i] = i % 7 == 0 ? special[i / 7 % 9] : (i % 5 == 0 ? cut : N(gen));
  }
  const auto h = to_host(bin_matrix(bc, x, n));
  for (long long r = 0; r < n; ++r)
    for (int f = 0; f < F; ++f)
      ASSERT_EQ(h(r, f), bc.bin_of(f, x[static_cast<std::size_t>(r * F + f)])) << "row " << r << " feature " << f;
}

TEST(GbdtBinning, ManyValuesGiveBoundedRoughlyEqualBins) {
  std::vector<float> v;
  for (int i = 0; i < 10000; ++i) v.push_back(static_cast<float>(i % 5000) * 0.5f);
  std::sort(v.begin(), v.end());
  const auto cuts = cuts_from_sorted(v, 16);
  ASSERT_LE(cuts.size(), 16u);
  ASSERT_GE(cuts.size(), 12u);
  BinCuts bc;
  bc.upper = {cuts};
  bc.finish();
  std::vector<int> count(cuts.size(), 0);
  for (float x : v) ++count[bc.bin_of(0, x)];
  for (int c : count) EXPECT_LT(c, 10000 / 16 * 2) << "a bin holds far more than its share";
}

// Cuts depend on the global data only: all ranks (row blocks) vs rank 0 alone with every row,
// with and without sampling.
TEST(GbdtBinning, CutsIndependentOfRankCount) {
  const Comm world;
  const long long N = 5000;
  const int F = 3;
  std::vector<float> all(static_cast<std::size_t>(N * F));
  for (long long i = 0; i < N * F; ++i)
    all[static_cast<std::size_t>(i)] =
        i % 17 == 0 ? NAN : static_cast<float>(rng::normal(rng::hash(1, static_cast<std::uint64_t>(i))));
  const long long first = N * world.rank() / world.size();
  const long long n = N * (world.rank() + 1) / world.size() - first;
  std::vector<float> mine(all.begin() + first * F, all.begin() + (first + n) * F);
  for (long long sample : {100000LL, 1500LL}) {
    const BinCuts a = compute_cuts(mine, n, F, first, N, 32, sample, 5, world);
    MPI_Comm solo_raw;
    MPI_Comm_split(MPI_COMM_WORLD, world.rank() == 0 ? 0 : MPI_UNDEFINED, 0, &solo_raw);
    int same = 1;
    if (solo_raw != MPI_COMM_NULL) {
      const BinCuts b = compute_cuts(all, N, F, 0, N, 32, sample, 5, Comm(solo_raw));
      same = a.upper == b.upper ? 1 : 0;
      MPI_Comm_free(&solo_raw);
    }
    world.broadcast(&same, 1);
    EXPECT_EQ(same, 1) << "sample_rows " << sample;
    for (int f = 0; f < F; ++f) EXPECT_LE(a.upper[static_cast<std::size_t>(f)].size(), 32u);
  }
}

namespace {
struct HistFixture {
  int n = 30001, F = 5;
  std::vector<int> offset;
  View2<std::uint8_t> bins;
  QuantGrad q;
  View1<int> in_bag;
  SplitRule rule;  // splits node 0 into nodes 1 (left) and 2
  // `uniform`: every feature 12 bins (the kernels' uniform-stride path), else varied bin counts.
  explicit HistFixture(bool uniform = false) {
    offset = {0};
    for (int f = 0; f < F; ++f) offset.push_back(offset.back() + (uniform ? 12 : 4 + 3 * f));
    bins = View2<std::uint8_t>("bins", n, F);
    q.gh = View2<long long>("gh", n, 2);
    q.count_bits = 16;  // n < 2^16
    in_bag = View1<int>("in_bag", n);
    auto hb = Kokkos::create_mirror_view(bins);
    auto hq = Kokkos::create_mirror_view(q.gh);
    auto hc = Kokkos::create_mirror_view(in_bag);
    for (int r = 0; r < n; ++r) {
      const auto k = rng::hash(3, static_cast<std::uint64_t>(r));
      for (int f = 0; f < F; ++f)
        hb(r,
           f) = static_cast<std::uint8_t>(rng::hash(k, f) % static_cast<std::uint64_t>(offset[f + 1] - offset[f]));
      hq(r, 0) = static_cast<long long>(rng::hash(k, 100) % 2000001) - 1000000;
      // h packed with a count of one (Note [packed hessian and count]).
      hq(r, 1) = static_cast<long long>(rng::hash(k, 101) % 1000000) * (1ll << q.count_bits) + 1;
      hc(r) = r % 7 != 0;  // some rows out of the bag
    }
    Kokkos::deep_copy(bins, hb);
    Kokkos::deep_copy(q.gh, hq);
    Kokkos::deep_copy(in_bag, hc);
    // Feature 2 has 10 bins; its last (9) plays the NaN bin, sent left.
    rule = SplitRule{2, 4, 9, true};
  }
  // Plain host loop: the reference. node 0: all in-bag rows; 1 / 2: the rule's left / right side.
  Hist naive(int node) const {
    auto hb = to_host(bins);
    auto hq = to_host(q.gh);
    auto hc = to_host(in_bag);
    Hist out(static_cast<std::size_t>(offset.back()) * kHistStride, 0);
    for (int r = 0; r < n; ++r) {
      if (!hc(r)) continue;
      const bool left = rule.goes_left(hb(r, rule.feature));
      if ((node == 1 && !left) || (node == 2 && left)) continue;
      for (int f = 0; f < F; ++f) {
        const std::size_t b = kHistStride * static_cast<std::size_t>(offset[f] + hb(r, f));
        out[b] += hq(r, 0);
        out[b + 1] += hq(r, 1);
      }
    }
    return out;
  }
};
}  // namespace

// Exact equality with a serial loop, whatever OMP_NUM_THREADS (the test runs at 1 and 2 threads);
// 30k rows so the root is summed in several chunks when threads allow.
TEST(GbdtHistogram, KernelEqualsSerialSumAndSubtractionGivesSibling) {
  HistFixture fx;
  const auto columns = transpose_bins(fx.bins);
  HistogramBuilder hb(fx.bins, columns, fx.offset);
  RowPartition part(fx.n);
  part.reset(fx.in_bag);
  EXPECT_EQ(part.bag_rows(), fx.n - (fx.n + 6) / 7);
  const auto parent = hb.build(fx.q, part, {0});
  EXPECT_EQ(parent[0], fx.naive(0));
  part.split(0, 1, 2, fx.rule, columns);
  EXPECT_EQ(part.count(1) + part.count(2), part.bag_rows());
  const auto built = hb.build(fx.q, part, {1, 2});
  ASSERT_EQ(built.size(), 2u);
  EXPECT_EQ(built[0], fx.naive(1));
  EXPECT_EQ(built[1], fx.naive(2));
  // Parent minus one child is the other child, exactly.
  EXPECT_EQ(subtract(parent[0], built[0]), built[1]);
  // Splitting a child again keeps its rows and only its rows.
  part.split(2, 3, 4, SplitRule{0, 1, 3, false}, columns);
  EXPECT_EQ(part.count(3) + part.count(4), part.count(2));
  EXPECT_EQ(part.begin(3), part.begin(2));
  const auto grand = hb.build(fx.q, part, {3, 4});
  EXPECT_EQ(subtract(built[1], grand[0]), grand[1]);
  // A node with few, scattered rows (summed row by row, as its parent: histograms this small are
  // never summed feature by feature, RowAndFeatureKernelsEqualSerialSum checks that kernel).
  part.split(3, 5, 6, SplitRule{1, 0, 6, false}, columns);
  ASSERT_LT(part.count(5) * 8, part.rows());
  const auto small = hb.build(fx.q, part, {5, 6});
  EXPECT_EQ(subtract(grand[0], small[0]), small[1]);

  // Growth's fused pass (sibling in place + both searches) against subtract + two best_split.
  BinCuts cuts;
  for (int f = 0; f < fx.F; ++f) {
    std::vector<float> upper;
    for (int b = 0; b + 1 < fx.offset[f + 1] - fx.offset[f]; ++b) upper.push_back(static_cast<float>(b));
    upper.back() = FLT_MAX;
    cuts.upper.push_back(upper);
  }
  cuts.finish();
  ASSERT_EQ(cuts.offset, fx.offset);
  SplitParams sp;
  sp.min_data_in_leaf = 100;
  const std::vector<char> allowed(static_cast<std::size_t>(fx.F), 1);
  const Stats s3 = node_stats(grand[0], cuts, fx.q.count_bits), s4 = node_stats(grand[1], cuts, fx.q.count_bits);
  Hist sibling = built[1];  // node 2, becomes node 4 = 2 - 3
  SplitCandidate c3, c4;
  subtract_and_search(sibling, grand[0], cuts, allowed, s3, s4, true, true, 1e-6, 1e-6, fx.q.count_bits, sp, c3,
                      c4);
  EXPECT_EQ(sibling, grand[1]);
  for (const auto& [fused, alone] :
       {std::make_pair(c3, best_split(grand[0], cuts, allowed, s3, 1e-6, 1e-6, fx.q.count_bits, sp)),
        std::make_pair(c4, best_split(grand[1], cuts, allowed, s4, 1e-6, 1e-6, fx.q.count_bits, sp))}) {
    ASSERT_TRUE(alone.valid);
    EXPECT_EQ(fused.feature, alone.feature);
    EXPECT_EQ(fused.bin, alone.bin);
    EXPECT_EQ(fused.default_left, alone.default_left);
    EXPECT_EQ(fused.gain, alone.gain);
    EXPECT_EQ(fused.left.c, alone.left.c);
  }
}

namespace {
// The row kernel (accumulate_histogram) over a fixture's in-bag rows, copied to the host.
Hist row_kernel_sum(HistFixture& f, const RowPartition& part) {
  const std::size_t size = static_cast<std::size_t>(f.offset.back()) * kHistStride;
  View1<int> offset("offset", f.offset.size());
  auto ho = Kokkos::create_mirror_view(offset);
  for (std::size_t i = 0; i < f.offset.size(); ++i) ho(i) = f.offset[i];
  Kokkos::deep_copy(offset, ho);
  View1<long long> by_rows("by_rows", size);
  View2<long long> partial("partial", static_cast<std::size_t>(ExecSpace().concurrency()), size);
  accumulate_histogram(f.bins, offset, f.q, part.index(), 0, part.bag_rows(), by_rows, partial);
  auto hr = to_host(by_rows);
  return Hist(hr.data(), hr.data() + size);
}
}  // namespace

// The two CPU kernels directly, on all in-bag rows: row chunks with partial histograms (several
// chunks when the test runs with 2 threads) and feature blocks; both equal the serial loop.
TEST(GbdtHistogram, RowAndFeatureKernelsEqualSerialSum) {
  HistFixture fx;
  RowPartition part(fx.n);
  part.reset(fx.in_bag);
  const std::size_t size = static_cast<std::size_t>(fx.offset.back()) * kHistStride;
  EXPECT_EQ(row_kernel_sum(fx, part), fx.naive(0));
  {  // the same bins per feature: the uniform-stride row loop
    HistFixture u(true);
    RowPartition pu(u.n);
    pu.reset(u.in_bag);
    EXPECT_EQ(row_kernel_sum(u, pu), u.naive(0));
  }
  if (std::is_same<MemSpace, HostSpace>::value) {
    Hist by_features(size, 0);
    View1<long long> ordered("ordered", 2 * static_cast<std::size_t>(fx.n));
    accumulate_histogram_by_feature(transpose_bins(fx.bins), fx.offset, fx.q, part.index(), 0, part.bag_rows(),
                                    by_features.data(), ordered);
    EXPECT_EQ(by_features, fx.naive(0));
    // Every row in the bag: the feature kernel reads the gradients in place, without a copy.
    HistFixture full;
    Kokkos::deep_copy(full.in_bag, 1);
    RowPartition all(full.n);
    all.reset(full.in_bag);
    ASSERT_EQ(all.bag_rows(), full.n);
    Hist whole(size, 0);
    accumulate_histogram_by_feature(transpose_bins(full.bins), full.offset, full.q, all.index(), 0, full.n,
                                    whole.data(), ordered);
    EXPECT_EQ(whole, full.naive(0));
  }
}

// Note [packed gradients]: the fixture's rows as packed 8-byte values (g in +-30000, h below 60000,
// so sums over 30k rows fit their 31 and 32 bits). The kernels' expanded sums must equal a serial
// loop in the 16-byte layout with a count of 0, at 1 and 2 threads.
namespace {
QuantGrad packed_of(const HistFixture& fx) {
  QuantGrad q;
  q.packed = true;
  q.count_bits = fx.q.count_bits;
  q.p = View1<long long>("p", static_cast<std::size_t>(fx.n));
  auto hq = to_host(fx.q.gh);
  auto hp = Kokkos::create_mirror_view(q.p);
  for (int r = 0; r < fx.n; ++r) hp(r) = (hq(r, 0) % 30001) * (1ll << 32) + ((hq(r, 1) >> fx.q.count_bits) % 60000);
  Kokkos::deep_copy(q.p, hp);
  return q;
}
}  // namespace

TEST(GbdtHistogram, PackedKernelsEqualSerialSum) {
  for (const bool uniform : {false, true}) {
    HistFixture fx(uniform);
    const QuantGrad q = packed_of(fx);
    // The reference: a serial loop over the packed rows, decoded per row.
    auto hb_ = to_host(fx.bins);
    auto hp = to_host(q.p);
    auto hc = to_host(fx.in_bag);
    const std::size_t size = static_cast<std::size_t>(fx.offset.back()) * kHistStride;
    Hist want(size, 0);
    for (int r = 0; r < fx.n; ++r) {
      if (!hc(r)) continue;
      const long long h = hp(r) & ((1ll << 32) - 1), g = (hp(r) - h) / (1ll << 32);
      for (int f = 0; f < fx.F; ++f) {
        const std::size_t b = kHistStride * static_cast<std::size_t>(fx.offset[f] + hb_(r, f));
        want[b] += g;
        want[b + 1] += h;
      }
    }
    RowPartition part(fx.n);
    part.reset(fx.in_bag);
    const auto columns = transpose_bins(fx.bins);
    HistogramBuilder hb(fx.bins, columns, fx.offset);
    EXPECT_EQ(hb.build(q, part, {0})[0], want);  // row chunks, expanded
    if (std::is_same<MemSpace, HostSpace>::value) {
      Hist by_features(size, 0);
      View1<long long> ordered("ordered", 2 * static_cast<std::size_t>(fx.n));
      accumulate_histogram_by_feature(columns, fx.offset, q, part.index(), 0, part.bag_rows(), by_features.data(),
                                      ordered);
      expand_packed(by_features.data(), fx.offset.back());
      EXPECT_EQ(by_features, want);
    }
    // Counts estimated from hessians: round(h x factor) below the shifted hessian.
    Hist filled = want;
    fill_counts(filled, 0.5, fx.q.count_bits);
    for (std::size_t b = 0; b < size; b += kHistStride) {
      EXPECT_EQ(filled[b], want[b]);
      EXPECT_EQ(filled[b + 1] >> fx.q.count_bits, want[b + 1]);
      EXPECT_EQ(filled[b + 1] & ((1ll << fx.q.count_bits) - 1),
                std::min((1ll << fx.q.count_bits) - 1, (want[b + 1] + 1) / 2));  // round(h / 2), halves up
    }
  }
}
