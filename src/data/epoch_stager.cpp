// Staging one epoch on the host: ids from the permutation, rows read in file order window by window,
// each scattered to its processing slot.
#include "data/epoch_stager.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace hpct {

namespace {
// Rows per read: about 1M values, the batch size of h5::read_rows' element selections. Between
// reads the loader checks for cancellation and lets the main thread take the HDF5 lock.
std::uint64_t window_rows(const Dataset& data, const std::vector<FieldSpec>& specs) {
  std::uint64_t words = 0;
  for (std::size_t f = 0; f < specs.size(); ++f) {
    if (!specs[f].ragged) {
      words += specs[f].words();
    } else {
      const auto& o = data.ragged_offsets(static_cast<int>(f));
      words += specs[f].words() * (o.back() / std::max<std::uint64_t>(data.rows(), 1) + 1);  // the mean row
    }
  }
  return std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / std::max<std::uint64_t>(words, 1));
}

// Note (sieve reads): an HDF5 element selection costs about 15x a contiguous read per row (3840 rows
// of 263 floats: 150 ms against 10 ms on the development machine). So a window of wanted rows that
// are dense enough in the file, one in at most kSieveSpan rows, is read as one contiguous block and
// the wanted rows picked from it; sparser rows (many ranks) are read by element selection.
constexpr std::uint64_t kSieveSpan = 8;
}  // namespace

void sample_ids(const EpochOrder& sampler, const std::vector<std::uint64_t>& positions, std::uint64_t epoch,
                std::uint64_t* ids) {
  if (!sampler.shuffled()) {
    std::copy(positions.begin(), positions.end(), ids);
    return;
  }
  const std::vector<std::uint64_t> perm = sampler.permutation(epoch);
  for (std::size_t i = 0; i < positions.size(); ++i) ids[i] = perm[positions[i]];
}

void ragged_starts(const std::vector<std::uint64_t>& offsets, const std::uint64_t* ids, std::size_t rows,
                   std::uint64_t* starts) {
  starts[0] = 0;
  for (std::size_t i = 0; i < rows; ++i) starts[i + 1] = starts[i] + offsets[ids[i] + 1] - offsets[ids[i]];
}

EpochStager::EpochStager(std::shared_ptr<const Dataset> data, std::vector<FieldSpec> specs,
                         const EpochOrder& sampler, const std::vector<std::uint64_t>& positions)
    : data_(std::move(data)), specs_(std::move(specs)), sampler_(sampler), positions_(positions) {
  const std::size_t rows = positions_.size();
  ids_.resize(rows);
  slots_.resize(rows);
  sorted_ids_.resize(rows);
  window_ = std::min<std::uint64_t>(window_rows(*data_, specs_), std::max<std::uint64_t>(data_->rows(), 1));
  window_ids_.reserve(window_);
  std::vector<std::uint64_t> elements(specs_.size(), 0);
  for (std::size_t f = 0; f < specs_.size(); ++f)
    if (specs_[f].ragged) elements[f] = most_elements(*data_, static_cast<int>(f), window_);
  window_fields_ = HostFields(specs_, window_, elements);
}

long long EpochStager::stage(std::uint64_t epoch, const HostRows& out, const std::atomic<bool>& cancel) {
  const std::size_t rows = positions_.size();
  sample_ids(sampler_, positions_, epoch, ids_.data());
  std::copy(ids_.begin(), ids_.end(), out.ids);
  for (std::size_t f = 0; f < specs_.size(); ++f)
    if (specs_[f].ragged)
      ragged_starts(data_->ragged_offsets(static_cast<int>(f)), ids_.data(), rows, out.starts[f]);
  // The file is read in ascending row order (what an HDF5 selection needs); slots_[i] is where
  // the i-th smallest id goes in processing order.
  std::iota(slots_.begin(), slots_.end(), 0);
  std::sort(slots_.begin(), slots_.end(), [&](std::uint64_t a, std::uint64_t b) { return ids_[a] < ids_[b]; });
  for (std::size_t i = 0; i < rows; ++i) sorted_ids_[i] = ids_[slots_[i]];

  const std::vector<FieldBuffer>& window = window_fields_.buffers();
  const bool per_epoch = data_->varies_by_epoch();
  long long bad = kNoBadValue;
  for (std::size_t first = 0; first < rows;) {
    if (cancel.load()) return kNoBadValue;
    // The window: the wanted rows within `window_` rows of the file from the first one.
    const std::uint64_t base = sorted_ids_[first];
    std::size_t end = first;
    while (end < rows && sorted_ids_[end] - base < window_) ++end;
    const std::size_t n = end - first;
    const std::uint64_t span = sorted_ids_[end - 1] - base + 1;
    // Rows that differ per epoch (augmented images) are rendered for this epoch, row by row.
    const bool sieve = !per_epoch && span <= kSieveSpan * n;
    // Windows ascend through the file, so the first one with a bad value holds the first one. A
    // sieve read also checks rows other ranks use: all rows of the part are read by some rank every
    // epoch, so the first bad row over ranks is the same.
    long long window_bad = kNoBadValue;
    if (sieve) {
      window_bad = data_->read_block(base, span, window);
      window_bad = std::min(window_bad, first_bad_value(specs_, window, span, nullptr, base));
    } else {
      window_ids_.assign(sorted_ids_.begin() + static_cast<std::ptrdiff_t>(first),
                         sorted_ids_.begin() + static_cast<std::ptrdiff_t>(end));
      window_bad = per_epoch ? data_->read_epoch_rows(epoch, window_ids_, window)
                             : data_->read_rows(window_ids_, window);
      window_bad = std::min(window_bad, first_bad_value(specs_, window, n, window_ids_.data()));
    }
    if (bad == kNoBadValue) bad = window_bad;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t row = sieve ? sorted_ids_[first + i] - base : i;
      const std::uint64_t slot = slots_[first + i];
      for (std::size_t f = 0; f < specs_.size(); ++f) {
        const std::uint64_t w = specs_[f].words();
        const auto* src = static_cast<const std::uint32_t*>(window[f].values);
        if (!specs_[f].ragged) {
          std::memcpy(out.words[f] + slot * w, src + row * w, w * 4);
        } else {
          const std::uint64_t* o = window[f].offsets;
          std::memcpy(out.words[f] + out.starts[f][slot] * w, src + o[row] * w, (o[row + 1] - o[row]) * w * 4);
        }
      }
    }
    first = end;
  }
  return bad;
}

}  // namespace hpct
