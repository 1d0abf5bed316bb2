// Staging one epoch on the host: ids from the permutation, rows read in file order chunk by chunk,
// each scattered to its processing slot.
#include "data/epoch_stager.hpp"

#include <algorithm>
#include <numeric>

namespace hpct {

namespace {
// Rows per HDF5 read: about 1M values, the batch size of h5::read_rows' element selections. Between
// chunks the loader checks for cancellation and lets the main thread take the HDF5 lock.
std::uint64_t chunk_rows(const TabularSource& src) {
  return std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / (src.d_in + src.d_out));
}
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

EpochStager::EpochStager(const TabularSource& src, const Sampler& sampler,
                         const std::vector<std::uint64_t>& positions)
    : src_(src), sampler_(sampler), positions_(positions) {
  const std::size_t rows = positions_.size();
  ids_.resize(rows);
  slots_.resize(rows);
  sorted_ids_.resize(rows);
  const std::uint64_t chunk = std::min<std::uint64_t>(chunk_rows(src_), rows);
  chunk_ids_.reserve(chunk);
  chunk_x_.resize(chunk * src_.d_in);
  chunk_y_.resize(chunk * src_.d_out);
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

  const std::size_t dx = src_.d_in, dy = src_.d_out;
  const std::size_t chunk = chunk_rows(src_);
  long long bad = kNoBadValue;
  for (std::size_t first = 0; first < rows; first += chunk) {
    if (cancel.load()) return kNoBadValue;
    const std::size_t n = std::min(chunk, rows - first);
    chunk_ids_.assign(sorted_ids_.begin() + static_cast<std::ptrdiff_t>(first),
                      sorted_ids_.begin() + static_cast<std::ptrdiff_t>(first + n));
    // Chunks ascend through the file, so the first chunk with a bad value holds the first one.
    const long long chunk_bad = read_tabular_rows(src_, chunk_ids_, chunk_x_.data(), chunk_y_.data());
    if (bad == kNoBadValue) bad = chunk_bad;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t slot = slots_[first + i];
      std::copy_n(&chunk_x_[i * dx], dx, out.x + slot * dx);
      std::copy_n(&chunk_y_[i * dy], dy, out.y + slot * dy);
    }
  }
  return bad;
}

}  // namespace hpct
