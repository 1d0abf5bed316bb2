// GBDT hot paths: the fixed-point histogram kernel (root and one tree level), the builder as training calls it, sibling subtraction, split search and the histogram all-reduce.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "comm/comm.hpp"
#include "core/kokkos_compat.hpp"
#include "core/rng.hpp"
#include "gbdt/binning.hpp"
#include "gbdt/histogram.hpp"
#include "gbdt/partition.hpp"
#include "gbdt/split.hpp"

namespace {

using namespace hpct;
using namespace hpct::gbdt;

constexpr int kBinsPerFeature = 256;  // 255 value bins + the NaN bin, as with max_bin 255
constexpr int kCountBits = 21;        // 1M rows (Note [packed hessian and count])

// Hashed bins, gradients of both signs, every row in the bag. A free function: nvcc allows no device
// lambda in a constructor.
void fill_rows(const View2<std::uint8_t>& b, const View2<long long>& gh, const View1<int>& in_bag) {
  const int F = static_cast<int>(b.extent(1));
  Kokkos::parallel_for(
      "bench::fill_rows", Kokkos::RangePolicy<ExecSpace>(0, static_cast<int>(b.extent(0))),
      KOKKOS_LAMBDA(const int r) {
        const std::uint64_t k = rng::hash(11, static_cast<std::uint64_t>(r));
        for (int f = 0; f < F; ++f)
          b(r, f) = static_cast<std::uint8_t>(rng::hash(k, static_cast<std::uint64_t>(f)) % kBinsPerFeature);
        gh(r, 0) = static_cast<long long>(rng::hash(k, 100) % 2000001) - 1000000;
        gh(r, 1) = static_cast<long long>(rng::hash(k, 101) % 1000000) * (1ll << kCountBits) + 1;  // h, count 1
        in_bag(r) = 1;
      });
}

// Synthetic binned data: n rows x F features of uint8 bins, quantized gradients of both signs,
// every row in the bag, all in node 0 of a RowPartition.
struct HistInput {
  View2<std::uint8_t> bins;
  std::vector<int> offset;
  View1<int> offset_d;
  QuantGrad q;
  RowPartition part;
  View2<std::uint8_t> columns;

  HistInput(int n, int F) : part(n) {
    bins = View2<std::uint8_t>("bench::bins", static_cast<std::size_t>(n), static_cast<std::size_t>(F));
    q.gh = View2<long long>("bench::qgh", static_cast<std::size_t>(n), 2);
    q.scale_g = q.scale_h = 1.0;
    q.count_bits = kCountBits;
    View1<int> in_bag("bench::in_bag", static_cast<std::size_t>(n));
    fill_rows(bins, q.gh, in_bag);
    offset.resize(static_cast<std::size_t>(F) + 1);
    for (int f = 0; f <= F; ++f) offset[static_cast<std::size_t>(f)] = f * kBinsPerFeature;
    offset_d = View1<int>("bench::offset", offset.size());
    auto oh = Kokkos::create_mirror_view(offset_d);
    for (std::size_t i = 0; i < offset.size(); ++i) oh(i) = offset[i];
    Kokkos::deep_copy(offset_d, oh);
    part.reset(in_bag);
    columns = transpose_bins(bins);
    fence();
  }
  // Splits every node of the tree down to `depth` (node i's children: 2i+1, 2i+2) at the median bin
  // of feature `level`: a full level of 2^depth nodes with scattered rows, as in a real tree.
  void split_to_depth(int depth) {
    for (int d = 0; d < depth; ++d)
      for (int node = (1 << d) - 1; node < (1 << (d + 1)) - 1; ++node)
        part.split(node, 2 * node + 1, 2 * node + 2,
                   SplitRule{d, kBinsPerFeature / 2 - 1, kBinsPerFeature - 1, false}, columns);
    fence();
  }
};

// Bytes the kernel must stream per row: F bin bytes + g, h (int64) + the row index (int32).
double row_bytes(int F) { return F + 2.0 * sizeof(long long) + sizeof(int); }

void set_row_counters(benchmark::State& state, double rows, int F) {
  state.counters["rows"] = benchmark::Counter(rows, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GB"] = benchmark::Counter(rows * row_bytes(F) * 1e-9,
                                            benchmark::Counter::kIsIterationInvariantRate);
}

// The kernel alone over all rows into one node (the root histogram): zero + accumulate, fenced.
void BM_HistogramKernelRoot(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), F = static_cast<int>(state.range(1));
  HistInput in(n, F);
  const std::size_t size = static_cast<std::size_t>(F) * kBinsPerFeature * kHistStride;
  View1<long long> hist("bench::hist", size);
  View2<long long> partial("bench::partial", static_cast<std::size_t>(ExecSpace().concurrency()), size);
  for (auto _ : state) {
    Kokkos::deep_copy(hist, 0ll);
    accumulate_histogram(in.bins, in.offset_d, in.q, in.part.index(), 0, n, hist, partial);
    fence();
  }
  set_row_counters(state, n, F);
}
BENCHMARK(BM_HistogramKernelRoot)
    ->ArgNames({"rows", "features"})
    ->Args({100000, 28})
    ->Args({1000000, 28})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// HistogramBuilder::build as depthwise growth calls it for one level below `depth` splits: the
// left child of every pair (half the rows, scattered over the row array), with the host copies.
void BM_HistogramBuildLevel(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), F = static_cast<int>(state.range(1));
  const int depth = static_cast<int>(state.range(2));
  HistInput in(n, F);
  in.split_to_depth(depth);
  HistogramBuilder hb(in.bins, in.columns, in.offset);
  std::vector<int> build;
  long long rows = 0;
  for (int node = (1 << depth) - 1; node < (1 << (depth + 1)) - 1; node += depth == 0 ? 1 : 2) {
    build.push_back(node);
    rows += in.part.count(node);
  }
  for (auto _ : state) {
    auto out = hb.build(in.q, in.part, build);
    benchmark::DoNotOptimize(out.data());
    fence();
  }
  set_row_counters(state, static_cast<double>(rows), F);
  state.counters["nodes"] = static_cast<double>(build.size());
}
BENCHMARK(BM_HistogramBuildLevel)
    ->ArgNames({"rows", "features", "depth"})
    ->Args({1000000, 28, 0})
    ->Args({1000000, 28, 2})
    ->Args({1000000, 28, 4})
    ->Args({1000000, 28, 5})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// RowPartition::split of the root (all rows) at one feature's median bin.
void BM_PartitionSplit(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  HistInput in(n, 28);
  int f = 0;
  for (auto _ : state) {
    in.part.split(0, 1, 2, SplitRule{f, kBinsPerFeature / 2 - 1, kBinsPerFeature - 1, false}, in.columns);
    fence();
    f = (f + 1) % 28;
  }
  state.counters["rows"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PartitionSplit)->ArgName("rows")->Arg(1000000)->UseRealTime()->Unit(benchmark::kMillisecond);

// The per-node benchmarks' widths: HIGGS's 28 features and two wider tables.
void feature_counts(benchmark::internal::Benchmark* b) {
  b->ArgName("features")->Arg(28)->Arg(128)->Arg(512)->UseRealTime()->Unit(benchmark::kMicrosecond);
}

// Sibling = parent - child on host Hist vectors (what growth does instead of a second pass).
void BM_HistogramSubtract(benchmark::State& state) {
  const int F = static_cast<int>(state.range(0));
  const std::size_t per = static_cast<std::size_t>(F) * kBinsPerFeature * kHistStride;
  Hist parent(per), child(per);
  for (std::size_t i = 0; i < per; ++i) {
    parent[i] = static_cast<long long>(rng::hash(5, i) % 1000000) + 1000000;
    child[i] = static_cast<long long>(rng::hash(6, i) % 1000000);
  }
  for (auto _ : state) {
    Hist sib = subtract(parent, child);
    benchmark::DoNotOptimize(sib.data());
    benchmark::ClobberMemory();
  }
  // Read parent and child, write the sibling.
  state.counters["GB"] = benchmark::Counter(3.0 * per * sizeof(long long) * 1e-9,
                                            benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bins"] = benchmark::Counter(static_cast<double>(F) * kBinsPerFeature,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_HistogramSubtract)->Apply(feature_counts);

// best_split over one node's histogram: every bin boundary of every feature, both NaN directions.
void BM_BestSplit(benchmark::State& state) {
  const int F = static_cast<int>(state.range(0));
  BinCuts cuts;
  std::vector<float> upper(kBinsPerFeature - 1);
  for (int b = 0; b < kBinsPerFeature - 1; ++b) upper[static_cast<std::size_t>(b)] = static_cast<float>(b);
  upper.back() = FLT_MAX;
  cuts.upper.assign(static_cast<std::size_t>(F), upper);
  cuts.finish();
  const int total = cuts.total_bins();
  Hist hist(static_cast<std::size_t>(total) * kHistStride);
  // Value-bin counts are one rotation per feature of the same list, so every feature partitions
  // the same rows; the NaN bin takes what makes each feature's gradient sum equal feature 0's.
  std::vector<long long> base(kBinsPerFeature - 1);
  for (std::size_t b = 0; b < base.size(); ++b) base[b] = 1000 + static_cast<long long>(rng::hash(3, b) % 3000);
  auto at = [&](int f, int b) {
    return kHistStride * static_cast<std::size_t>(cuts.offset[static_cast<std::size_t>(f)] + b);
  };
  long long g0 = 0;
  for (int f = 0; f < F; ++f) {
    long long gsum = 0;
    for (int b = 0; b < kBinsPerFeature - 1; ++b) {
      const long long rows = base[static_cast<std::size_t>((b + 7 * f) % (kBinsPerFeature - 1))];
      const auto k = rng::hash(static_cast<std::uint64_t>(f), static_cast<std::uint64_t>(b));
      hist[at(f, b)] = rows * (static_cast<long long>(k % 1000001) - 500000);  // g (scale 1e6)
      hist[at(f, b) + 1] = rows * 250000 * (1ll << kCountBits) + rows;         // h, count
      gsum += hist[at(f, b)];
    }
    const int nan = kBinsPerFeature - 1;
    if (f == 0) g0 = gsum - 40 * 100000;
    hist[at(f, nan)] = g0 - gsum;
    hist[at(f, nan) + 1] = 40ll * 250000 * (1ll << kCountBits) + 40;
  }
  const Stats parent = node_stats(hist, cuts, kCountBits);
  const std::vector<char> allowed(static_cast<std::size_t>(F), 1);
  SplitParams p;
  for (auto _ : state) {
    SplitCandidate c = best_split(hist, cuts, allowed, parent, 1e6, 1e6, kCountBits, p);
    benchmark::DoNotOptimize(c);
  }
  state.counters["bins"] = benchmark::Counter(static_cast<double>(total),
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_BestSplit)->Apply(feature_counts);

// The all-reduce of one level's histograms (nodes x 28 x 256 x 3 int64) over all ranks, as growth
// does once per level (depthwise) or per split (leafwise). A no-op on one rank; run under mpirun
// -np 2+ to see it. Fixed iterations: every rank makes the same number of collective calls.
void BM_HistogramAllreduce(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const Comm world;
  std::vector<long long> buf(static_cast<std::size_t>(nodes) * 28 * kBinsPerFeature * kHistStride, 1);
  for (auto _ : state) {
    world.allreduce_sum(buf.data(), buf.size());
    benchmark::ClobberMemory();
  }
  state.counters["ranks"] = world.size();
  state.counters["MB"] = static_cast<double>(buf.size() * sizeof(long long)) / 1e6;
}
BENCHMARK(BM_HistogramAllreduce)
    ->ArgName("nodes")
    ->Arg(1)
    ->Arg(32)
    ->Iterations(50)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
