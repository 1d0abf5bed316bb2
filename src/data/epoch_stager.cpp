// Staging one epoch on the host: ids from the permutation, rows read in file order window by window,
// each scattered to its processing slot.
#include "data/epoch_stager.hpp"

#include <algorithm>
#include <numeric>

namespace hpct {

namespace {
// Rows per HDF5 read: about 1M values, the batch size of h5::read_rows' element selections. Between
// reads the loader checks for cancellation and lets the main thread take the HDF5 lock.
std::uint64_t window_rows(std::uint64_t d_in, std::uint64_t d_out) {
  return std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / (d_in + d_out));
}

// Note (sieve reads): an HDF5 element selection costs about 15x a contiguous read per row (3840 rows
// of 263 floats: 150 ms against 10 ms on the development machine). So a window of wanted rows that
// are dense enough in the file, one in at most kSieveSpan rows, is read as one contiguous block and
// the wanted rows picked from it; sparser rows (many ranks) are read by element selection.
constexpr std::uint64_t kSieveSpan = 8;
}  // namespace

void sample_ids(const Sampler& sampler, const std::vector<std::uint64_t>& positions, std::uint64_t epoch,
                std::uint64_t* ids) {
  if (!sampler.shuffled()) {
    std::copy(positions.begin(), positions.end(), ids);
    return;
  }
  const std::vector<std::uint64_t> perm = sampler.permutation(epoch);
  for (std::size_t i = 0; i < positions.size(); ++i) ids[i] = perm[positions[i]];
}

EpochStager::EpochStager(std::shared_ptr<const Dataset> data, const Sampler& sampler,
                         const std::vector<std::uint64_t>& positions)
    : data_(std::move(data)), d_in_(field_width(*data_, 0)), d_out_(field_width(*data_, 1)), sampler_(sampler),
      positions_(positions) {
  const std::size_t rows = positions_.size();
  ids_.resize(rows);
  slots_.resize(rows);
  sorted_ids_.resize(rows);
  const std::uint64_t window = std::min<std::uint64_t>(window_rows(d_in_, d_out_), std::max<std::uint64_t>(data_->rows(), 1));
  window_ids_.reserve(window);
  window_x_.resize(window * d_in_);
  window_y_.resize(window * d_out_);
}

long long EpochStager::stage(std::uint64_t epoch, HostRows out, const std::atomic<bool>& cancel) {
  const std::size_t rows = positions_.size();
  sample_ids(sampler_, positions_, epoch, ids_.data());
  std::copy(ids_.begin(), ids_.end(), out.ids);
  // The file is read in ascending row order (what an HDF5 selection needs); slots_[i] is where
  // the i-th smallest id goes in processing order.
  std::iota(slots_.begin(), slots_.end(), 0);
  std::sort(slots_.begin(), slots_.end(), [&](std::uint64_t a, std::uint64_t b) { return ids_[a] < ids_[b]; });
  for (std::size_t i = 0; i < rows; ++i) sorted_ids_[i] = ids_[slots_[i]];

  const std::size_t dx = d_in_, dy = d_out_;
  const std::uint64_t window = window_rows(d_in_, d_out_);
  long long bad = kNoBadValue;
  for (std::size_t first = 0; first < rows;) {
    if (cancel.load()) return kNoBadValue;
    // The window: the wanted rows within `window` rows of the file from the first one.
    const std::uint64_t base = sorted_ids_[first];
    std::size_t end = first;
    while (end < rows && sorted_ids_[end] - base < window) ++end;
    const std::size_t n = end - first;
    const std::uint64_t span = sorted_ids_[end - 1] - base + 1;
    const bool sieve = span <= kSieveSpan * n;
    // Windows ascend through the file, so the first one with a bad value holds the first one. A
    // sieve read also checks rows other ranks use: all rows of the part are read by some rank every
    // epoch, so the first bad row over ranks is the same.
    long long window_bad = kNoBadValue;
    if (sieve) {
      window_bad = data_->read_block(base, span, {window_x_.data(), window_y_.data()});
    } else {
      window_ids_.assign(sorted_ids_.begin() + static_cast<std::ptrdiff_t>(first),
                         sorted_ids_.begin() + static_cast<std::ptrdiff_t>(end));
      window_bad = data_->read_rows(window_ids_, {window_x_.data(), window_y_.data()});
    }
    if (bad == kNoBadValue) bad = window_bad;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t row = sieve ? sorted_ids_[first + i] - base : i;
      const std::uint64_t slot = slots_[first + i];
      std::copy_n(&window_x_[row * dx], dx, out.x + slot * dx);
      std::copy_n(&window_y_[row * dy], dy, out.y + slot * dy);
    }
    first = end;
  }
  return bad;
}

}  // namespace hpct
