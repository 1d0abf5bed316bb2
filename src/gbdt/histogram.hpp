// Gradient histograms in fixed point: per-row gradients/hessians are quantized to int64 with a
// global power-of-two scale, then summed per bin over one node's rows. Integer sums make the
// histograms identical for every thread count, rank count and backend, and make sibling histograms
// by subtraction (parent - built child) exact.
#pragma once

#include <cstdint>
#include <new>
#include <vector>

#include "comm/comm.hpp"
#include "core/kokkos_compat.hpp"
#include "gbdt/partition.hpp"

namespace hpct::gbdt {

// Quantized per-row statistics of one tree, side by side so a row's pair is one 16-byte access
// (rows of deep nodes are read scattered): g scaled and rounded, and the hessian packed with a row
// count of one (Note [packed hessian and count]).
struct QuantGrad {
  View2<long long> gh;              // [n, 2]: g, (h << count_bits) + 1 (not packed)
  View1<long long> p;               // [n]: g * 2^32 + h (packed: Note [packed gradients])
  double scale_g = 1, scale_h = 1;  // G = sum(g) / scale_g, H = (sum(hc) >> count_bits) / scale_h
  int count_bits = 0;
  bool packed = false;  // rows in `p`, histograms summed as one int64 a bin (gbdt/packed.hpp)
};

// Note [packed hessian and count]
// A histogram bin holds two int64: the g sum and hc = (h sum << count_bits) + row count. Every
// row's quantized h is >= 0 (hessians and weights are), so sums of hc never borrow from the count
// field, which has room for the global row count (count_bits = its bit width); parent - child
// and the all-reduce work on hc as on any integer. The h scale is divided by 2^count_bits so the
// packed sums stay below 2^62: h keeps a resolution of 2^-(61 - count_bits) of the total (2^-41 at
// 1M rows), exact and the same on every rank and thread count. Half the bytes of separate g, h,
// count slots: the histogram kernels are bound by the read-modify-write of bins, and a node's
// histogram (28 features: 115 KiB) stays in a core's L2 cache.

// `max_abs_g`, `max_h`: the largest |g| and |h| over all ranks (the caller reduces them, under the
// watchdog). Rows out of the bag are quantized too (they never enter a histogram: RowPartition
// leaves them out). `packed`: 8-byte rows and bins where the row count allows (packed_fits).
void quantize(const View1<double>& g, const View1<double>& h, double max_abs_g, double max_h, long long global_rows,
              QuantGrad& q, bool packed = false);

// Statistics of one bin or node: quantized sums and a row count.
struct Stats {
  long long g = 0, h = 0, c = 0;
  Stats& operator+=(const Stats& o) {
    g += o.g;
    h += o.h;
    c += o.c;
    return *this;
  }
  Stats& operator-=(const Stats& o) {
    g -= o.g;
    h -= o.h;
    c -= o.c;
    return *this;
  }
};

// int64 slots per bin: g and hc (Note [packed hessian and count]): 16 bytes, one vector add per
// feature and row, and bin addresses by a shift.
constexpr int kHistStride = 2;

// Cache-line aligned storage: a 16-byte bin must not straddle two cache lines.
template <class T>
struct CacheAligned {
  using value_type = T;
  CacheAligned() = default;
  template <class U>
  CacheAligned(const CacheAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t(64)); }
  template <class U>
  bool operator==(const CacheAligned<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const CacheAligned<U>&) const {
    return false;
  }
};

// Host histogram of one node: kHistStride int64 per bin, bins laid out per BinCuts::offset.
using Hist = std::vector<long long, CacheAligned<long long>>;
inline Stats unpack_stats(long long g, long long hc, int count_bits) {
  return {g, hc >> count_bits, hc & ((1ll << count_bits) - 1)};
}
inline Stats bin_stats(const Hist& hist, int bin, int count_bits) {
  const std::size_t b = static_cast<std::size_t>(bin) * kHistStride;
  return unpack_stats(hist[b], hist[b + 1], count_bits);
}
// parent - child, exact (growth does this in place, see subtract_and_search).
Hist subtract(const Hist& parent, const Hist& child);

class HistogramBuilder {
 public:
  // `bins` [n, F] uint8, `columns` the same feature-major [F, n] (transpose_bins); `offset` the
  // first slot of each feature (F + 1 entries).
  HistogramBuilder(View2<std::uint8_t> bins, View2<std::uint8_t> columns, const std::vector<int>& offset);

  // Histograms of `nodes` over their rows in `part`, summed over this rank's rows only (the caller
  // all-reduces). One host Hist per listed node; packed q: counts still to fill (fill_counts).
  std::vector<Hist> build(const QuantGrad& q, const RowPartition& part, const std::vector<int>& nodes);
  // Hands a histogram no longer needed back for reuse by build(): a fresh one is 100s of KiB that
  // the allocator would map, fault in and unmap again for every node.
  void recycle(Hist&& h);

  int total_bins() const { return total_bins_; }
  // A zeroed host histogram (a recycled one when there is one); `zeroed` int64 from the front
  // only (the rest left as it was) when the caller overwrites the rest, as expand_packed does.
  Hist take(std::size_t zeroed = ~std::size_t{0});
  // Host backends whose histograms are all summed row by row (small enough for L2, see
  // histogram.cpp): growth may then sum them while partitioning (gbdt/level.hpp).
  bool row_by_row_host() const;
  const View2<std::uint8_t>& bins() const { return bins_; }
  const std::vector<int>& offset_host() const { return offset_host_; }

 private:
  View2<std::uint8_t> bins_, columns_;
  View1<int> offset_;
  std::vector<int> offset_host_;
  View1<long long> ordered_;  // host backends: a node's (g, h) pairs in row order
  int total_bins_ = 0;
  View1<long long> node_hist_;  // one node's histogram (execution space)
  View2<long long> partial_;    // host backends: one partial histogram per row chunk
  std::vector<Hist> spare_;     // recycled histograms
};

// The kernel alone, for tests and benchmarks: hist(kHistStride * bin + {0, 1}) += gh(r, {0, 1}) of the rows
// index[begin, begin + count). `hist` must be zeroed by the caller. On host backends the rows are
// cut into chunks summed into `partial` ([chunks, hist size]; at most partial.extent(0) chunks)
// and then added up; on GPUs every row adds atomically. Both are exact integer sums.
void accumulate_histogram(const View2<std::uint8_t>& bins, const View1<int>& offset, const QuantGrad& q,
                          const View1<int>& index, long long begin, long long count, const View1<long long>& hist,
                          const View2<long long>& partial);

// Host backends, one thread: hist(kHistStride * (offset[f] + bins[r, f]) + {0, 1}) += q.gh[r] of the
// rows r = rows[0, m) (`bins` row-major with F features, `offset` on the host); packed q:
// hist(offset[f] + bins[r, f]) += q.p[r] (the caller expands the result, expand_packed).
void sum_rows_host(long long* hist, const std::uint8_t* bins, int F, const int* offset, const int* rows,
                   long long m, const QuantGrad& q);

// Host backends, the same sums feature by feature: threads take blocks of features, so each
// feature's bins stay in the L1 cache while its column is read, and no partial histograms are
// needed. `hist` (host, zeroed) receives the node's histogram; `ordered` (2 x rows) is scratch
// for the node's gradients in row order.
void accumulate_histogram_by_feature(const View2<std::uint8_t>& columns, const std::vector<int>& offset,
                                     const QuantGrad& q, const View1<int>& index, long long begin, long long count,
                                     long long* hist, const View1<long long>& ordered);

}  // namespace hpct::gbdt
