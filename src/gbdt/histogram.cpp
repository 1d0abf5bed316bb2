// The histogram kernels and quantization. Host backends: dense nodes of wide data feature by
// feature (threads own blocks of features), other nodes row by row in chunks with one private partial histogram per
// chunk (no atomics, no false sharing) and a parallel sum of the partials. GPUs: one thread per row
// with atomic adds. All are exact integer sums, so every path gives the same bits.
#include "gbdt/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "gbdt/fixed_point.hpp"
#include "gbdt/packed.hpp"

namespace hpct::gbdt {

namespace {
// Round to nearest (halves away from zero) without a branch on the sign or a libm call: the
// select compiles to a blend, the cast truncates.
KOKKOS_INLINE_FUNCTION long long round_ll(double x) { return static_cast<long long>(x + (x < 0 ? -0.5 : 0.5)); }

// A chunk below this many rows costs more to zero and sum than it saves.
constexpr long long kMinHistogramChunkRows = 2048;
constexpr long long kPrefetchRows = 16;
// Partial histograms of at most this many int64 in all are added up on the calling thread: a few
// microseconds, less than a parallel region costs when its threads sleep between regions
// (OMP_WAIT_POLICY=passive, or cores shared with other processes).
constexpr long long kSerialSum = 32768;
// A node holding at least 1/kColumnDensity of the rows is built feature by feature, when a whole
// histogram is too large for a core's L2 cache (above kRowHistBytes) and the row-by-row kernel's
// scattered bin updates would miss it. Smaller histograms are summed row by row even for the root:
// a row's gradients are read once, not once per feature (feature by feature, a 1M-row root streams
// the 16 MB gradient array 28 times and is bound by that), and the bins stay in L2.
constexpr long long kColumnDensity = 4;
constexpr long long kRowHistBytes = 512 * 1024;

#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
// One bin (g, hc) as a vector of 2 int64 (unaligned access, aliasing the histogram's long longs).
typedef long long BinVec __attribute__((vector_size(16), aligned(8), __may_alias__));
#endif

// Adds one row's (g, hc) (two adjacent int64, Note [packed hessian and count]) to one bin, as one
// vector add where the compiler offers vectors.
KOKKOS_INLINE_FUNCTION void add_bin(long long* e, const long long* gh) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
  *reinterpret_cast<BinVec*>(e) += *reinterpret_cast<const BinVec*>(gh);
#else
  e[0] += gh[0];
  e[1] += gh[1];
#endif
}

// Adds one row's (g, hc) to its bin of every feature; Packed: its one packed int64 (Note [packed
// gradients] in gbdt/packed.hpp) to a one-int64 bin.
template <bool Atomic, bool Packed>
KOKKOS_INLINE_FUNCTION void add_row(long long* hist, const std::uint8_t* row, const int* offset, int F,
                                    const long long* gh) {
  if (Packed) {
    const long long v = gh[0];
    for (int f = 0; f < F; ++f) {
      long long* e = hist + offset[f] + static_cast<int>(row[f]);
      if (Atomic) Kokkos::atomic_add(e, v);
      else *e += v;
    }
    return;
  }
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
  const BinVec v = *reinterpret_cast<const BinVec*>(gh);  // loaded once for all features
#endif
  for (int f = 0; f < F; ++f) {
    long long* e = hist + kHistStride * (offset[f] + static_cast<int>(row[f]));
    if (Atomic) {
      Kokkos::atomic_add(e, gh[0]);
      Kokkos::atomic_add(e + 1, gh[1]);
    } else {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
      *reinterpret_cast<BinVec*>(e) += v;
#else
      add_bin(e, gh);
#endif
    }
  }
}

// add_row on the host when feature f's bins start at f * stride (Note [uniform bin stride]).
template <bool Packed>
inline void add_row_uniform(long long* hist, const std::uint8_t* row, int stride, int F, const long long* gh) {
  if (Packed) {
    const long long v = gh[0];
#if !defined(__NVCC__)
#pragma GCC unroll 4
#endif
    for (int f = 0; f < F; ++f) {
      hist[static_cast<int>(row[f])] += v;
      hist += stride;
    }
    return;
  }
#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
  const BinVec v = *reinterpret_cast<const BinVec*>(gh);
  const long long step = static_cast<long long>(kHistStride) * stride;
#if !defined(__NVCC__)  // nvcc's front end does not know the pragma (the CUDA build's host code)
#pragma GCC unroll 4
#endif
  for (int f = 0; f < F; ++f) {
    *reinterpret_cast<BinVec*>(hist + kHistStride * static_cast<int>(row[f])) += v;
    hist += step;
  }
#else
  for (int f = 0; f < F; ++f) add_bin(hist + kHistStride * (f * stride + static_cast<int>(row[f])), gh);
#endif
}

// sum_rows_host for one layout: W int64 a row and a bin.
template <bool Packed>
void sum_rows_impl(long long* hist, const std::uint8_t* B, int F, const int* off, const int* rows, long long m,
                   const long long* gh) {
  constexpr long long W = Packed ? 1 : kHistStride;
  // Note [uniform bin stride]: when every feature has the same number of bins (continuous data at
  // max_bin), feature f's bins start at f * stride and the row loop steps a pointer instead of
  // loading each feature's offset; with 4 features unrolled that is ~20% faster on x86 (a 1M x 28
  // micro-benchmark, 0.8 -> 0.63 ns per row and feature).
  const int stride = F > 0 ? off[1] - off[0] : 0;
  bool uniform = true;
  for (int f = 0; f <= F; ++f) uniform = uniform && off[f] == f * stride;
  for (long long i = 0; i < m; ++i) {
    const long long r = rows[i];
#if defined(__GNUC__)
    // Rows of deep nodes are scattered: fetch a row's bins and gradients a few rows ahead.
    if (i + kPrefetchRows < m) {
      const long long ahead = rows[i + kPrefetchRows];
      __builtin_prefetch(B + ahead * F);
      __builtin_prefetch(B + ahead * F + F - 1);  // a row may straddle two cache lines
      __builtin_prefetch(gh + W * ahead);
    }
#endif
    if (uniform) add_row_uniform<Packed>(hist, B + r * F, stride, F, gh + W * r);
    else add_row<false, Packed>(hist, B + r * F, off, F, gh + W * r);
  }
}
}  // namespace

void quantize(const View1<double>& g, const View1<double>& h, double max_abs_g, double max_h, long long global_rows,
              QuantGrad& q, bool packed) {
  if (packed && packed_fits(global_rows)) {
    quantize_packed(g, h, max_abs_g, max_h, global_rows, q);
    return;
  }
  q.packed = false;
  if (q.p.extent(0) != 0) q.p = View1<long long>();
  const int n = static_cast<int>(g.extent(0));
  // The scale depends on global maxima and the global row count only: same on every rank count.
  q.scale_g = fixed_scale(max_abs_g, static_cast<double>(global_rows));
  // Note [packed hessian and count]: room for the global row count below the hessian bits.
  int bits = 0;
  std::frexp(static_cast<double>(global_rows), &bits);  // global_rows < 2^bits
  q.count_bits = bits;
  q.scale_h = std::ldexp(fixed_scale(max_h, static_cast<double>(global_rows)), -bits);
  if (q.gh.extent(0) != static_cast<std::size_t>(n))  // kept from tree to tree: 16 bytes a row
    q.gh = View2<long long>(Kokkos::view_alloc("gbdt::qgh", Kokkos::WithoutInitializing),
                            static_cast<std::size_t>(n), 2);
  const double sg = q.scale_g, sh = q.scale_h;
  const long long unit = 1ll << bits;
  auto gh = q.gh;
  Kokkos::parallel_for(
      "gbdt::quantize", range(0, n), KOKKOS_LAMBDA(const int i) {
        gh(i, 0) = round_ll(g(i) * sg);
        gh(i, 1) = round_ll(h(i) * sh) * unit + 1;
      });
}

Hist subtract(const Hist& parent, const Hist& child) {
  Hist out = parent;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] -= child[i];
  return out;
}

void sum_rows_host(long long* hist, const std::uint8_t* B, int F, const int* off, const int* rows, long long m,
                   const QuantGrad& q) {
  if (q.packed) sum_rows_impl<true>(hist, B, F, off, rows, m, q.p.data());
  else sum_rows_impl<false>(hist, B, F, off, rows, m, q.gh.data());
}

void accumulate_histogram(const View2<std::uint8_t>& bins, const View1<int>& offset, const QuantGrad& q,
                          const View1<int>& index, long long begin, long long count, const View1<long long>& hist,
                          const View2<long long>& partial) {
  if (count <= 0) return;
  const int F = static_cast<int>(bins.extent(1));
  const std::uint8_t* B = bins.data();
  const int* off = offset.data();
  const int* idx = index.data() + begin;
  const bool packed = q.packed;
  const long long* gh = packed ? q.p.data() : q.gh.data();
  if (!kHostBackend) {
    long long* out = hist.data();
    Kokkos::parallel_for(
        "gbdt::histogram", range<Kokkos::IndexType<long long>>(0, count), KOKKOS_LAMBDA(const long long i) {
          const long long r = idx[i];
          if (packed) add_row<true, true>(out, B + r * F, off, F, gh + r);
          else add_row<true, false>(out, B + r * F, off, F, gh + 2 * r);
        });
    return;
  }
  const long long chunks = kmin(static_cast<long long>(partial.extent(0)),
                                host_chunks(count, kMinHistogramChunkRows));
  const long long per_chunk = (count + chunks - 1) / chunks;
  // Packed: the sums fill only the first half of hist (expanded afterwards), and of the partials.
  const long long size = static_cast<long long>(hist.extent(0)) / (packed ? kHistStride : 1);
  long long* part = partial.data();
  long long* out = hist.data();
  // The first chunk straight into the (zeroed) result, the others each into a zeroed partial.
  for_each_host_chunk("gbdt::histogram", chunks, [=](const int c) {
    long long* h = c == 0 ? out : part + c * size;
    if (c > 0)
      for (long long j = 0; j < size; ++j) h[j] = 0;
    const long long lo = c * per_chunk, hi = kmin(count, lo + per_chunk);
    if (packed) sum_rows_impl<true>(h, B, F, off, idx + lo, hi - lo, gh);
    else sum_rows_impl<false>(h, B, F, off, idx + lo, hi - lo, gh);
  });
  if (chunks == 1) return;
  const auto add_partials = [=](const long long j) {
    long long s = 0;
    for (long long c = 1; c < chunks; ++c) s += part[c * size + j];
    out[j] += s;
  };
  // A few partials of a small histogram: added on the calling thread, without a region that
  // would wait for a sleeping thread to wake (see kSerialSum).
  if ((chunks - 1) * size <= kSerialSum) {
    for (long long j = 0; j < size; ++j) add_partials(j);
    return;
  }
  Kokkos::parallel_for("gbdt::hist_sum", host_range<Kokkos::IndexType<long long>>(0, size), add_partials);
}

void accumulate_histogram_by_feature(const View2<std::uint8_t>& columns, const std::vector<int>& offset,
                                     const QuantGrad& q, const View1<int>& index, long long begin, long long count,
                                     long long* hist, const View1<long long>& ordered) {
  if (count <= 0) return;
  const long long n = static_cast<long long>(columns.extent(1));
  const int F = static_cast<int>(columns.extent(0));
  const int* idx = index.data() + begin;
  // The node's (g, h) pairs in row order, read once per feature below. All rows in order (the
  // root without bagging) need no copy.
  const bool all_rows = begin == 0 && count == n;
  const bool packed = q.packed;  // one int64 a row and a bin (Note [packed gradients])
  const long long W = packed ? 1 : kHistStride;
  const long long* gh = packed ? q.p.data() : q.gh.data();
  long long* og = ordered.data();
  if (!all_rows) {
    const long long chunks = host_chunks(count, kMinHistogramChunkRows);
    const long long per = (count + chunks - 1) / chunks;
    for_each_host_chunk("gbdt::order_gh", chunks, [=](const int c) {
      for (long long i = c * per, hi = kmin(count, i + per); i < hi; ++i)
        for (long long k = 0; k < W; ++k) og[W * i + k] = gh[W * idx[i] + k];
    });
  }
  const long long* g = all_rows ? gh : og;
  const std::uint8_t* cols = columns.data();
  const int* off = offset.data();
  const long long blocks = kmin<long long>(F, kmax(1, host_exec().concurrency()));
  for_each_host_chunk("gbdt::hist_cols", blocks, [=](const int b) {
    for (int f = static_cast<int>(b * F / blocks); f < static_cast<int>((b + 1) * F / blocks); ++f) {
      const std::uint8_t* col = cols + static_cast<long long>(f) * n;
      long long* h = hist + W * off[f];
      // Locals, not the lambda's captures: the stores into h could alias those, forcing reloads.
      const long long m = count;
      const int* rows = idx;
      const long long* gr = g;
      if (packed) {
        if (all_rows) {
          for (long long i = 0; i < m; ++i) h[col[i]] += gr[i];
        } else {
          for (long long i = 0; i < m; ++i) h[col[rows[i]]] += gr[i];
        }
      } else if (all_rows) {
        for (long long i = 0; i < m; ++i) add_bin(h + kHistStride * col[i], gr + 2 * i);
      } else {
        for (long long i = 0; i < m; ++i) add_bin(h + kHistStride * col[rows[i]], gr + 2 * i);
      }
    }
  });
}

Hist HistogramBuilder::take(std::size_t zeroed) {
  const std::size_t size = static_cast<std::size_t>(total_bins_) * kHistStride;
  if (spare_.empty()) return Hist(size, 0);
  Hist h = std::move(spare_.back());
  spare_.pop_back();
  std::fill(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(std::min(zeroed, size)), 0ll);
  return h;
}

bool HistogramBuilder::row_by_row_host() const {
  return kHostBackend &&
         static_cast<long long>(total_bins_) * kHistStride * static_cast<long long>(sizeof(long long)) <=
             kRowHistBytes;
}

void HistogramBuilder::recycle(Hist&& h) {
  if (h.size() == static_cast<std::size_t>(total_bins_) * kHistStride) spare_.push_back(std::move(h));
  h = Hist();
}

HistogramBuilder::HistogramBuilder(View2<std::uint8_t> bins, View2<std::uint8_t> columns,
                                   const std::vector<int>& offset)
    : bins_(bins), columns_(columns), offset_host_(offset), total_bins_(offset.back()) {
  offset_ = View1<int>("gbdt::offset", offset.size());
  auto h = Kokkos::create_mirror_view(offset_);
  for (std::size_t i = 0; i < offset.size(); ++i) h(i) = offset[i];
  Kokkos::deep_copy(offset_, h);
  const std::size_t size = static_cast<std::size_t>(total_bins_) * kHistStride;
  if (!kHostBackend) node_hist_ = View1<long long>("gbdt::node_hist", size);
  const std::size_t chunks = kHostBackend ? static_cast<std::size_t>(kmax(1, exec().concurrency())) : 0;
  partial_ = View2<long long>("gbdt::partial_hist", chunks, chunks > 0 ? size : 0);
}

std::vector<Hist> HistogramBuilder::build(const QuantGrad& q, const RowPartition& part,
                                          const std::vector<int>& nodes) {
  const std::size_t size = static_cast<std::size_t>(total_bins_) * kHistStride;
  std::vector<Hist> out;
  out.reserve(nodes.size());
  for (int node : nodes) {
    // Packed sums fill the first half only, and expand_packed rewrites all of it: a node's
    // fixed cost, 62 times a tree leaf-wise.
    out.push_back(take(q.packed ? static_cast<std::size_t>(total_bins_) : size));
    const HostView1<long long> host(out.back().data(), size);
    // Host backends sum straight into the returned vector; GPUs into a device buffer, then copy.
    const long long rows = part.count(node);
    // Dense nodes (a large share of the rows: the root and the first levels) of wide data feature
    // by feature when every thread can take a feature; everything else row by row.
    if (kHostBackend && rows * kColumnDensity >= part.rows() &&
        static_cast<long long>(size * sizeof(long long)) > kRowHistBytes &&
        host_exec().concurrency() <= static_cast<int>(bins_.extent(1))) {
      if (ordered_.extent(0) == 0)  // 16 bytes a row: only where this path is taken (wide data)
        ordered_ = View1<long long>(Kokkos::view_alloc("gbdt::ordered_gh", Kokkos::WithoutInitializing),
                                    2 * bins_.extent(0));
      accumulate_histogram_by_feature(columns_, offset_host_, q, part.index(), part.begin(node), rows, host.data(),
                                      ordered_);
      if (q.packed) expand_packed(host.data(), total_bins_);
      continue;
    }
    const View1<long long> target = kHostBackend ? View1<long long>(host.data(), size) : node_hist_;
    if (!kHostBackend) Kokkos::deep_copy(node_hist_, 0ll);
    accumulate_histogram(bins_, offset_, q, part.index(), part.begin(node), rows, target, partial_);
    if (!kHostBackend) Kokkos::deep_copy(host, node_hist_);
    if (q.packed) expand_packed(host.data(), total_bins_);
  }
  return out;
}

}  // namespace hpct::gbdt
