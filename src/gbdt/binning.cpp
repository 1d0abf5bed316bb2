// Quantile binning: global cut points gathered over ranks, then a per-value binary search.
#include "gbdt/binning.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/rng.hpp"

#if defined(__AVX2__) && !defined(__CUDACC__)  // host-only fast path (Note [gathered bin search])
#include <immintrin.h>
#endif

namespace hpct::gbdt {

namespace {
constexpr std::uint64_t kBinSampleStream = 0x62696e73ull;  // "bins"

// A float strictly between a and b when one exists (a < b), else a: values <= a go left, b right.
float midpoint(float a, float b) {
  const float m = static_cast<float>((static_cast<double>(a) + static_cast<double>(b)) * 0.5);
  return (m >= a && m < b) ? m : a;
}
}  // namespace

// An LSD radix sort (3 passes of 11 bits): the cut points' sample is 200k values per feature,
// which std::sort took ~5% of a 100-tree HIGGS-like run to order. The key maps the float order onto unsigned order (sign bit
// flipped for positives, all bits for negatives); -0 sorts before +0, which compare equal anyway.
void sort_floats(std::vector<float>& v) {
  const std::size_t n = v.size();
  std::vector<std::uint32_t> key(n), tmp(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &v[i], sizeof u);
    key[i] = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  constexpr int kBits = 11, kBuckets = 1 << kBits;
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < 32; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const std::uint32_t k : key) ++count[(k >> shift) & (kBuckets - 1)];
    std::size_t at = 0;
    for (std::size_t& c : count) {
      const std::size_t here = c;
      c = at;
      at += here;
    }
    for (const std::uint32_t k : key) tmp[count[(k >> shift) & (kBuckets - 1)]++] = k;
    key.swap(tmp);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t u = (key[i] & 0x80000000u) ? (key[i] & 0x7fffffffu) : ~key[i];
    std::memcpy(&v[i], &u, sizeof u);
  }
}

std::uint8_t BinCuts::bin_of(int f, float x) const {
  const auto& u = upper[static_cast<std::size_t>(f)];
  if (std::isnan(x)) return static_cast<std::uint8_t>(u.size());
  if (is_categorical(f))  // a code: its own bin, or the NaN bin past the last one (as bin_matrix)
    return static_cast<std::uint8_t>(x >= 0 && x <= u.back() ? static_cast<int>(x) : static_cast<int>(u.size()));
  return static_cast<std::uint8_t>(lower_bin(u.data(), static_cast<int>(u.size()), clamp_inf(x)));
}

void BinCuts::finish() {
  offset.assign(upper.size() + 1, 0);
  for (std::size_t f = 0; f < upper.size(); ++f) offset[f + 1] = offset[f] + static_cast<int>(upper[f].size()) + 1;
}

std::vector<float> cuts_from_sorted(const std::vector<float>& v, int max_bin) {
  std::vector<float> distinct;
  std::vector<long long> count;
  for (float x : v) {
    if (distinct.empty() || x != distinct.back()) {
      distinct.push_back(x);
      count.push_back(0);
    }
    ++count.back();
  }
  std::vector<float> cuts;
  const std::size_t u = distinct.size();
  if (u <= static_cast<std::size_t>(max_bin)) {
    for (std::size_t i = 0; i + 1 < u; ++i) cuts.push_back(midpoint(distinct[i], distinct[i + 1]));
  } else {
    // Greedy equal-count bins; the target is recomputed from what is left so a heavy value that
    // fills several targets at once does not starve the later bins.
    long long left = static_cast<long long>(v.size());
    int bins_left = max_bin;
    long long acc = 0;
    for (std::size_t i = 0; i + 1 < u && bins_left > 1; ++i) {
      acc += count[i];
      const double target = static_cast<double>(left) / bins_left;
      if (static_cast<double>(acc) >= target || static_cast<double>(acc + count[i + 1]) > 1.5 * target) {
        cuts.push_back(midpoint(distinct[i], distinct[i + 1]));
        left -= acc;
        acc = 0;
        --bins_left;
      }
    }
  }
  cuts.push_back(FLT_MAX);
  return cuts;
}

BinCuts compute_cuts(const std::vector<float>& x, long long n, int F, long long first_row, long long global_rows,
                     int max_bin, long long sample_rows, std::uint64_t seed, const Comm& comm) {
  if (max_bin < 1 || max_bin > 255) throw Error("max_bin must be in [1, 255]", ExitCode::bad_input);
  const bool sample = global_rows > sample_rows;
  const double rate = sample ? static_cast<double>(sample_rows) / static_cast<double>(global_rows) : 1.0;
  const auto sampled = [&](long long r) {
    return !sample ||
           rng::uniform(rng::hash(seed, kBinSampleStream, static_cast<std::uint64_t>(first_row + r))) < rate;
  };
  long long mine_rows = 0;
  for (long long r = 0; r < n; ++r) mine_rows += sampled(r) ? 1 : 0;
  // Everyone gets every sampled row: the cuts are then a pure function of the sampled multiset.
  // Gathered in place: this rank's rows go straight to their place in `all`, so the sample is held
  // once, not twice, at the point where the run's raw rows are still in memory too (its peak).
  const int cnt = static_cast<int>(mine_rows * F);
  std::vector<int> counts(static_cast<std::size_t>(comm.size())), displs(counts.size());
  {
    const Comm::Waiting waiting;
    MPI_Allgather(&cnt, 1, MPI_INT, counts.data(), 1, MPI_INT, comm.raw());
  }
  long long total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > (1ll << 31) - 1) throw Error("bin_sample_rows x features exceeds 2^31 values");
  std::vector<float> all(static_cast<std::size_t>(total));
  float* at = all.data() + displs[static_cast<std::size_t>(comm.rank())];
  for (long long r = 0; r < n; ++r)
    if (sampled(r)) at = std::copy(x.begin() + r * F, x.begin() + (r + 1) * F, at);
  {
    const Comm::Waiting waiting;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), counts.data(), displs.data(), MPI_FLOAT,
                   comm.raw());
  }
  const long long rows = total / (F > 0 ? F : 1);
  BinCuts cuts;
  cuts.upper.resize(static_cast<std::size_t>(F));
  // Features are independent: one per host thread at a time.
  Kokkos::parallel_for("gbdt::cuts", host_range<Kokkos::Schedule<Kokkos::Dynamic>>(0, F), [&](const int f) {
    std::vector<float> col;
    col.reserve(static_cast<std::size_t>(rows));
    for (long long r = 0; r < rows; ++r) {
      const float v = all[static_cast<std::size_t>(r * F + f)];
      if (!std::isnan(v)) col.push_back(clamp_inf(v));
    }
    sort_floats(col);
    cuts.upper[static_cast<std::size_t>(f)] = cuts_from_sorted(col, max_bin);
  });
  fence();
  cuts.finish();
  return cuts;
}

void set_categorical(BinCuts& cuts, const std::vector<int>& num_categories, int max_bin) {
  const int F = cuts.num_features();
  cuts.categorical.assign(static_cast<std::size_t>(F), 0);
  for (int f = 0; f < F && f < static_cast<int>(num_categories.size()); ++f) {
    const int n = num_categories[static_cast<std::size_t>(f)];
    if (n < 0) continue;
    auto& u = cuts.upper[static_cast<std::size_t>(f)];
    u.resize(static_cast<std::size_t>(kmax(1, kmin(n, max_bin))));
    for (std::size_t b = 0; b < u.size(); ++b) u[b] = static_cast<float>(b);
    cuts.categorical[static_cast<std::size_t>(f)] = 1;
  }
  cuts.finish();
}

View2<std::uint8_t> bin_matrix(const BinCuts& cuts, const std::vector<float>& x, long long n) {
  const int F = cuts.num_features();
  View2<std::uint8_t> bins(Kokkos::view_alloc("gbdt::bins", Kokkos::WithoutInitializing),
                           static_cast<std::size_t>(n), static_cast<std::size_t>(F));
  auto h = Kokkos::create_mirror_view(bins);
  // Every feature's cut list padded to 256 with FLT_MAX: then a search is exactly 8 halvings,
  // and a block of rows searches side by side (independent chains the CPU overlaps) instead of
  // one load-compare chain after another.
  // Note [gathered bin search]: compilers vectorize the block's scalar loop badly (lane extracts
  // and inserts around every load: 25 ns a value, 5% of a 100-tree depth-6 run's CPU); with AVX2
  // the block is one 8-lane vector and each halving one gather, with the same comparisons, so the
  // same bins.
  // Four vectors of 8 rows each (kBlock 32): their searches are independent chains of gathers,
  // which the CPU overlaps (one chain waits on each gather's latency: 8 ns a value).
  constexpr int kSlots = 256, kLanes = 8, kChains = 4, kBlock = kLanes * kChains;
  std::vector<float> table(static_cast<std::size_t>(F) * kSlots, FLT_MAX);
  std::vector<int> nan_bin(static_cast<std::size_t>(F));
  for (int f = 0; f < F; ++f) {
    const auto& u = cuts.upper[static_cast<std::size_t>(f)];
    std::copy(u.begin(), u.end(), table.begin() + static_cast<std::ptrdiff_t>(f) * kSlots);
    nan_bin[static_cast<std::size_t>(f)] = static_cast<int>(u.size());
  }
  const float* tab = table.data();
  const int* nb = nan_bin.data();
  const float* px = x.data();
  const long long blocks = (n + kBlock - 1) / kBlock;
  Kokkos::parallel_for("gbdt::bin_matrix", host_range<Kokkos::IndexType<long long>>(0, blocks),
                       [=](const long long blk) {
                         const long long r0 = blk * kBlock, m = kmin<long long>(kBlock, n - r0);
                         for (int f = 0; f < F; ++f) {
                           const float* u = tab + static_cast<std::ptrdiff_t>(f) * kSlots;
                           float v[kBlock];
                           int pos[kBlock];
                           for (int j = 0; j < kBlock; ++j) {
                             v[j] = j < m ? clamp_inf(px[(r0 + j) * F + f]) : 0.0f;
                             pos[j] = 0;
                           }
#if defined(__AVX2__) && !defined(__CUDACC__)
                           // Note [gathered bin search]: 8 rows' searches as one vector, each
                           // halving one gather and compare (u < v is false for NaN, as below).
                           __m256 vv[kChains];
                           __m256i at[kChains];
                           for (int c = 0; c < kChains; ++c) {
                             vv[c] = _mm256_loadu_ps(v + kLanes * c);
                             at[c] = _mm256_setzero_si256();
                           }
                           for (int step = kSlots / 2; step >= 1; step /= 2) {
                             const __m256i s1 = _mm256_set1_epi32(step - 1), s = _mm256_set1_epi32(step);
                             for (int c = 0; c < kChains; ++c) {
                               const __m256i probe = _mm256_add_epi32(at[c], s1);
                               const __m256 lt = _mm256_cmp_ps(_mm256_i32gather_ps(u, probe, 4), vv[c], _CMP_LT_OQ);
                               at[c] = _mm256_add_epi32(at[c], _mm256_and_si256(_mm256_castps_si256(lt), s));
                             }
                           }
                           for (int c = 0; c < kChains; ++c)
                             _mm256_storeu_si256(reinterpret_cast<__m256i*>(pos + kLanes * c), at[c]);
#else
                           for (int step = kSlots / 2; step >= 1; step /= 2)
                             for (int j = 0; j < kBlock; ++j)
                               pos[j] += static_cast<int>(u[pos[j] + step - 1] < v[j]) * step;
#endif
                           for (int j = 0; j < m; ++j)  // NaN compares false everywhere: give it its own bin
                             h(r0 + j, f) = static_cast<std::uint8_t>(std::isnan(v[j]) ? nb[f] : pos[j]);
                         }
                       });
  fence();
  Kokkos::deep_copy(bins, h);
  return bins;
}

}  // namespace hpct::gbdt
