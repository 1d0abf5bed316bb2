// The rows one rank needs for one epoch, read from the file in one go (HDF5 hyperslabs of exactly
// those rows) and laid out in the order the rank processes them, so every micro-batch is a
// contiguous block of rows on the device and a step copies nothing.
// Memory per rank is about N / ranks rows; buffers are allocated once and reused every epoch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "data/sampler.hpp"
#include "data/tabular.hpp"

namespace hpct {

class EpochShard {
 public:
  EpochShard(const TabularSource& src, const Sampler& sampler, int rank);

  // Reads this rank's rows of `epoch`. Returns the bad-value code (see tabular.hpp) of the
  // first NaN/Inf among them; the caller agrees over ranks before training on it.
  long long load(std::uint64_t epoch);

  // Rows [first, first + count) of the device buffers hold micro-batch (step, micro).
  std::uint64_t first(std::uint64_t step, int micro) const { return offsets_[index(step, micro)]; }
  std::uint64_t count(std::uint64_t step, int micro) const {
    return offsets_[index(step, micro) + 1] - offsets_[index(step, micro)];
  }
  const View2<float>& inputs() const { return x_; }
  const View2<float>& targets() const { return y_; }
  // Global sample index (row of the part) of every row, for per-sample randomness.
  const View1<std::uint64_t>& ids() const { return ids_; }

 private:
  std::size_t index(std::uint64_t step, int micro) const {
    return static_cast<std::size_t>(step) * static_cast<std::size_t>(sampler_.accumulation()) +
           static_cast<std::size_t>(micro);
  }
  TabularSource src_;
  Sampler sampler_;
  int rank_;
  std::vector<std::uint64_t> offsets_;  // per (step, micro), plus the end
  std::vector<std::uint64_t> positions_;  // positions of the epoch order handled here, in order
  View2<float> x_, y_;
  View1<std::uint64_t> ids_;
  // Host staging: rows in file order, then in processing order.
  std::vector<float> sorted_x_, sorted_y_;
  typename View2<float>::host_mirror_type hx_, hy_;
  typename View1<std::uint64_t>::host_mirror_type hids_;
};

}  // namespace hpct
