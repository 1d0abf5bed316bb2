// Compaction of the bag (reset) and two-way splits of a node's slice of the row index.
#include "gbdt/partition.hpp"

#include <algorithm>
#include <type_traits>
#if defined(__AVX512F__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

namespace hpct::gbdt {

namespace {
// Below this many rows per chunk a thread costs more than it saves.
constexpr long long kMinPartitionChunkRows = 4096;
// Right pieces of fewer rows than this in all are placed on the calling thread: a memmove of at
// most 256 KiB costs less than a parallel region whose threads sleep between regions
// (OMP_WAIT_POLICY=passive, or cores shared with other processes).
constexpr long long kSerialMoveRows = 65536;
}  // namespace

RowPartition::RowPartition(long long rows)
    : index_("gbdt::row_index", static_cast<std::size_t>(rows)),
      scratch_("gbdt::row_scratch", static_cast<std::size_t>(rows)),
      counts_(2 * static_cast<std::size_t>(kmax(1, host_exec().concurrency()))) {}

View2<std::uint8_t> transpose_bins(const View2<std::uint8_t>& bins) {
  const long long n = static_cast<long long>(bins.extent(0)), F = static_cast<long long>(bins.extent(1));
  View2<std::uint8_t> columns(Kokkos::view_alloc("gbdt::bin_columns", Kokkos::WithoutInitializing),
                              static_cast<std::size_t>(F), static_cast<std::size_t>(n));
  Kokkos::parallel_for(
      "gbdt::transpose", range<Kokkos::IndexType<long long>>(0, n), KOKKOS_LAMBDA(const long long r) {
        for (long long f = 0; f < F; ++f) columns(f, r) = bins(r, f);
      });
  return columns;
}

void RowPartition::ensure(int node) {
  if (static_cast<int>(begin_.size()) <= node) {
    begin_.resize(static_cast<std::size_t>(node) + 1, 0);
    count_.resize(static_cast<std::size_t>(node) + 1, 0);
  }
}

void RowPartition::reset(const View1<int>& in_bag) {
  const long long n = rows();
  auto idx = index_;
  long long in = 0;
  // In-bag rows ascending from the front; out-of-bag rows after them (written from the back, so
  // both sides are placed in one pass without knowing the in-bag total yet).
  Kokkos::parallel_scan(
      "gbdt::bag_rows", range<Kokkos::IndexType<long long>>(0, n),
      KOKKOS_LAMBDA(const long long r, long long& upd, const bool final) {
        const bool keep = in_bag(r) != 0;
        if (final) idx(keep ? upd : n - 1 - (r - upd)) = static_cast<int>(r);
        upd += keep ? 1 : 0;
      },
      in);
  bag_rows_ = in;
  begin_.assign(1, 0);
  count_.assign(1, in);
  deferred_.clear();
}

void RowPartition::reset_all() {
  const long long n = rows();
  auto idx = index_;
  Kokkos::parallel_for(
      "gbdt::all_rows", range<Kokkos::IndexType<long long>>(0, n),
      KOKKOS_LAMBDA(const long long r) { idx(r) = static_cast<int>(r); });
  bag_rows_ = n;
  begin_.assign(1, 0);
  count_.assign(1, n);
  deferred_.clear();
}

void RowPartition::defer_split(int node, int left, int right, const SplitRule& rule) {
  set_split(node, left, right, 0);
  count_[static_cast<std::size_t>(right)] = 0;
  deferred_.push_back({node, left, right, rule});
}

void RowPartition::split(int node, int left, int right, const SplitRule& rule, const View2<std::uint8_t>& columns) {
  const long long b = begin(node), n = count(node);
  set_split(node, left, right, kHostBackend ? split_host(b, n, rule, columns) : split_scan(b, n, rule, columns));
}

void RowPartition::set_split(int node, int left, int right, long long left_rows) {
  const long long b = begin(node), n = count(node);
  ensure(kmax(left, right));
  begin_[static_cast<std::size_t>(left)] = b;
  count_[static_cast<std::size_t>(left)] = left_rows;
  begin_[static_cast<std::size_t>(right)] = b + left_rows;
  count_[static_cast<std::size_t>(right)] = n - left_rows;
}

// GPUs: one parallel_scan (two passes over the slice), left rows in order at the front, right rows
// from the back (reversed: order inside a node does not change any sum), then a copy back.
long long RowPartition::split_scan(long long b, long long n, const SplitRule& rule,
                                   const View2<std::uint8_t>& columns) {
  auto idx = index_;
  auto tmp = scratch_;
  const SplitRule s = rule;
  long long nl = 0;
  Kokkos::parallel_scan(
      "gbdt::partition", range<Kokkos::IndexType<long long>>(0, n),
      KOKKOS_LAMBDA(const long long i, long long& upd, const bool final) {
        const int r = idx(b + i);
        const bool l = s.goes_left(columns(s.feature, r));
        if (final) tmp(b + (l ? upd : n - 1 - (i - upd))) = r;
        upd += l ? 1 : 0;
      },
      nl);
  const auto range = std::make_pair(static_cast<std::size_t>(b), static_cast<std::size_t>(b + n));
  Kokkos::deep_copy(Kokkos::subview(idx, range), Kokkos::subview(tmp, range));
  return nl;
}

SplitRule categorical_rule(int feature, int nan_bin, const std::vector<int>& codes) {
  SplitRule s;
  s.feature = feature;
  s.nan_bin = nan_bin;
  s.categorical = true;
  for (const int c : codes) s.cat[c >> 5] |= 1u << (c & 31);
  return s;
}

namespace {
// One row of a piece, branch-free: a split sends rows either way unpredictably. Both slots are
// written (in place on the left: a row is never written ahead of where it was read); the counter
// of the side the row belongs to moves on.
void place_row(int* idx, int* tmp, long long& l, long long& r, int row, int b, int bin, int nan_bin, int nan_flip) {
  const int left = static_cast<int>(b <= bin) ^ (static_cast<int>(b == nan_bin) & nan_flip);
  idx[l] = row;
  tmp[r] = row;
  l += left;
  r += 1 - left;
}
}  // namespace

// Note [vector partition]
// partition_piece was 11-13% of a depth-6 run's CPU at about 6 cycles a row (a load of the row's
// bin, two stores, two counters). With AVX-512 (HPCTRAIN_NATIVE on such a CPU) 16 rows go at once:
// their bins come in one gather (4 bytes ending at the row's byte, so nothing past the column is
// read; rows 0-2 take the scalar loop), the rule gives a lane mask, and the left and the right
// rows are compressed in registers and stored whole (a compressing store to memory is slow on
// AMD Zen 4). Left rows keep their order and the counts are the scalar loop's: the same index.
long long partition_piece(int* idx, int* tmp, long long m, const std::uint8_t* col, const SplitRule& rule) {
  if (rule.categorical) {  // a set of bins: the plain loop (categorical splits are the rarer kind)
    long long l = 0, r = 0;
    for (long long i = 0; i < m; ++i) {
      const int row = idx[i];
      const int left = rule.goes_left(col[row]) ? 1 : 0;
      idx[l] = row;
      tmp[r] = row;
      l += left;
      r += 1 - left;
    }
    return l;
  }
  // The rule as plain locals: kept in registers while the loop stores to idx.
  const int bin = rule.bin, nan_bin = rule.nan_bin;
  // The NaN bin is above every value bin, so `b <= bin` says right for it; flipped when NaN goes left.
  const int nan_flip = rule.default_left ? 1 : 0;
  long long l = 0, r = 0;
  long long i = 0;
#if defined(__AVX512F__) && !defined(__CUDACC__)  // host-only fast path (Note [vector partition])
  // Bins compared in the top byte of each lane (unsigned), where the gather below leaves them.
  const __m512i vbin = _mm512_set1_epi32(static_cast<int>(static_cast<unsigned>(bin) << 24));
  const __m512i vnan = _mm512_set1_epi32(static_cast<int>(static_cast<unsigned>(nan_bin) << 24));
  const __m512i three = _mm512_set1_epi32(3), top_byte = _mm512_set1_epi32(static_cast<int>(0xff000000u));
  for (; i + 16 <= m; i += 16) {
    const __m512i rows = _mm512_loadu_si512(idx + i);
    if (_mm512_cmplt_epi32_mask(rows, three) != 0) {  // rows 0-2: their 4-byte reads would start before col
      for (long long j = i; j < i + 16; ++j) {
        const int row = idx[j];
        place_row(idx, tmp, l, r, row, col[row], bin, nan_bin, nan_flip);
      }
      continue;
    }
#if defined(__GNUC__)
    if (i + 48 <= m)  // rows of deep nodes are scattered: their bytes two blocks ahead
      for (int j = 32; j < 48; ++j) __builtin_prefetch(col + idx[i + j]);
#endif
    // Bytes row - 3 .. row as one int32 each: the row's bin is the top byte (little-endian). The
    // masked form with a zero source: the plain gather's undefined source warns in GCC 12.
    const __m512i b = _mm512_and_si512(_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xffff,
                                                                   _mm512_sub_epi32(rows, three), col, 1),
                                       top_byte);
    const __mmask16 left = static_cast<__mmask16>(_mm512_cmple_epu32_mask(b, vbin) ^
                                                  (nan_flip != 0 ? _mm512_cmpeq_epi32_mask(b, vnan) : 0));
    // Compressed in registers, stored whole: the lanes past the count land on slots still to be
    // written (idx: at or before i + 16, all loaded already; tmp: inside the piece).
    _mm512_storeu_si512(idx + l, _mm512_maskz_compress_epi32(left, rows));
    _mm512_storeu_si512(tmp + r, _mm512_maskz_compress_epi32(static_cast<__mmask16>(~left), rows));
    const int nl = __builtin_popcount(static_cast<unsigned>(left));
    l += nl;
    r += 16 - nl;
  }
#endif
  // Rows stay ascending in every node, so this walks one feature's column forwards.
  for (; i < m; ++i) {
    const int row = idx[i];
#if defined(__GNUC__)
    if (i + 16 < m) __builtin_prefetch(col + idx[i + 16]);  // rows of deep nodes are scattered
#endif
    place_row(idx, tmp, l, r, row, col[row], bin, nan_bin, nan_flip);
  }
  return l;
}

// Host backends: one read of the slice. Each chunk of rows writes its left rows to the front of
// its own part of index (in place: a chunk never writes ahead of where it reads) and its right rows
// to the same part of scratch; the chunks' pieces are then moved to their final places.
long long RowPartition::split_host(long long b, long long n, const SplitRule& rule,
                                   const View2<std::uint8_t>& columns) {
  const long long chunks = kmin(static_cast<long long>(counts_.size()) / 2, host_chunks(n, kMinPartitionChunkRows));
  const long long per = (n + chunks - 1) / chunks;
  int* idx = index_.data() + b;
  int* tmp = scratch_.data() + b;
  long long* cnt = counts_.data();
  const std::uint8_t* col = &columns(rule.feature, 0);
  const SplitRule s = rule;
  for_each_host_chunk("gbdt::partition", chunks, [=](const int c) {
    const long long lo = c * per, hi = kmin(n, lo + per);
    const long long l = lo + partition_piece(idx + lo, tmp + lo, hi - lo, col, s);
    const long long r = hi - l + lo;
    cnt[2 * c] = l - lo;
    cnt[2 * c + 1] = r - lo;
  });
  // Final places: left pieces packed from the front in chunk order, then the right pieces.
  std::vector<long long> lpos(static_cast<std::size_t>(chunks)), rpos(static_cast<std::size_t>(chunks));
  long long nl = 0;
  for (long long c = 0; c < chunks; ++c) {
    lpos[static_cast<std::size_t>(c)] = nl;
    nl += cnt[2 * c];
  }
  long long at = nl;
  for (long long c = 0; c < chunks; ++c) {
    rpos[static_cast<std::size_t>(c)] = at;
    at += cnt[2 * c + 1];
  }
  if (chunks == 1) {
    std::copy(tmp, tmp + cnt[1], idx + nl);
    return nl;
  }
  // Left pieces move towards the front (never past a piece not yet moved: moved in chunk order);
  // right pieces come from scratch, so they can be placed in parallel afterwards.
  for (long long c = 1; c < chunks; ++c)
    std::copy(idx + c * per, idx + c * per + cnt[2 * c], idx + lpos[static_cast<std::size_t>(c)]);
  const long long* rp = rpos.data();
  const auto move_right = [=](const int c) {
    std::copy(tmp + c * per, tmp + c * per + cnt[2 * c + 1], idx + rp[c]);
  };
  if (n - nl < kSerialMoveRows) {
    for (int c = 0; c < static_cast<int>(chunks); ++c) move_right(c);
    return nl;
  }
  for_each_host_chunk("gbdt::part_move", chunks, move_right);
  return nl;
}

}  // namespace hpct::gbdt
