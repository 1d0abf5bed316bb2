// The launch helpers for_range, nn::for_each_cell and sum_over (Note [inline host kernels]): every
// index once, sums equal to Kokkos's own with one thread, and no parallel region with one host thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <utility>

#include "core/kokkos_compat.hpp"
#include "nn/elementwise.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

using namespace hpct;

// The kernels live in free functions: nvcc rejects an extended lambda in a TEST body (a private
// member function of the test class).
View1<int> range_hits(const int n) {
  View1<int> hits("hits", n);
  for_range(
      "test_range", 0, n, KOKKOS_LAMBDA(const int i) { hits(i) += 1; });
  for_range(
      "test_range_u", std::uint64_t(10), std::uint64_t(n), KOKKOS_LAMBDA(const std::uint64_t i) { hits(i) += 2; });
  return hits;
}

View2<int> cell_values(const int rows, const int cols) {
  View2<int> m("m", rows, cols);
  nn::for_each_cell(
      "test_cells", rows, cols, KOKKOS_LAMBDA(const int i, const int j) { m(i, j) += i * cols + j + 1; });
  return m;
}

// Values whose sum depends on the order of the additions; {sum_over, Kokkos's parallel_reduce}.
std::pair<double, double> both_sums(const int n) {
  View1<double> v("v", n);
  Kokkos::parallel_for(
      "test_fill", range(0, n),
      KOKKOS_LAMBDA(const int i) { v(i) = (i % 3 == 0 ? 1e16 : 1.0) * (i % 2 ? -1 : 1) + 0.1 * i; });
  const double ours = sum_over(
      "test_sum", 0, n, KOKKOS_LAMBDA(const int i, double& acc) { acc += v(i); });
  double theirs = 0;
  Kokkos::parallel_reduce(
      "test_sum_k", range(0, n), KOKKOS_LAMBDA(const int i, double& acc) { acc += v(i); }, theirs);
  return {ours, theirs};
}

TEST(LaunchHelpers, ForRangeVisitsEveryIndexOnce) {
  const int n = 1000;
  const auto h = to_host(range_hits(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h(i), i < 10 ? 1 : 3) << i;
}

TEST(LaunchHelpers, ForEachCellCoversTheMatrix) {
  const int rows = 37, cols = 53;
  const auto h = to_host(cell_values(rows, cols));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) ASSERT_EQ(h(i, j), i * cols + j + 1);
}

TEST(LaunchHelpers, SumOverIsKokkosSumWithOneThread) {
  const auto [ours, theirs] = both_sums(4099);
  if (host_exec().concurrency() == 1) {
    EXPECT_EQ(std::memcmp(&ours, &theirs, sizeof(double)), 0) << ours << " " << theirs;
  } else {
    EXPECT_NEAR(ours, theirs, 1e3);
  }
}

#if defined(_OPENMP) && !defined(KOKKOS_ENABLE_CUDA)
// With one host thread the helpers open no parallel region; with more they launch through Kokkos,
// which opens one (the test runs at 1 and 2 threads, so neither case is skipped).
TEST(LaunchHelpers, ParallelRegionOnlyWithSeveralHostThreads) {
  std::atomic<int> level{0};
  for_range("test_region", 0, 4, [&](const int) { level.fetch_or(omp_get_level()); });
  nn::for_each_cell("test_region", 2, 2, [&](const int, const int) { level.fetch_or(omp_get_level()); });
  if (host_serial()) {
    EXPECT_EQ(level.load(), 0);
  } else {
    EXPECT_GT(level.load(), 0);
  }
}
#endif
