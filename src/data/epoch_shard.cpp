#include "data/epoch_shard.hpp"

#include <algorithm>
#include <numeric>

namespace hpct {

EpochShard::EpochShard(const TabularSource& src, const Sampler& sampler, int rank)
    : src_(src), sampler_(sampler), rank_(rank) {
  offsets_.push_back(0);
  for (std::uint64_t s = 0; s < sampler_.steps_per_epoch(); ++s)
    for (int k = 0; k < sampler_.accumulation(); ++k) {
      const auto r = sampler_.slice(s, k, rank_);
      for (std::uint64_t p = r.first; p < r.second; ++p) positions_.push_back(p);
      offsets_.push_back(positions_.size());
    }
  const std::uint64_t rows = positions_.size();
  // At least one row so views are never empty (a rank may get no rows when N < ranks * batch).
  x_ = View2<float>("shard_inputs", std::max<std::uint64_t>(rows, 1), src_.d_in);
  y_ = View2<float>("shard_targets", std::max<std::uint64_t>(rows, 1), src_.d_out);
  ids_ = View1<std::uint64_t>("shard_ids", std::max<std::uint64_t>(rows, 1));
  hids_ = Kokkos::create_mirror_view(ids_);
  hx_ = Kokkos::create_mirror_view(x_);
  hy_ = Kokkos::create_mirror_view(y_);
  sorted_x_.resize(rows * src_.d_in);
  sorted_y_.resize(rows * src_.d_out);
}

long long EpochShard::load(std::uint64_t epoch) {
  const std::vector<std::uint64_t> perm = sampler_.permutation(epoch);
  const std::size_t rows = positions_.size();
  // order[i] = which of this rank's processing slots holds the i-th smallest sample id.
  std::vector<std::uint64_t> ids(rows);
  for (std::size_t i = 0; i < rows; ++i) hids_(i) = ids[i] = perm[positions_[i]];
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
  std::vector<std::uint64_t> sorted_ids(rows);
  for (std::size_t i = 0; i < rows; ++i) sorted_ids[i] = ids[order[i]];

  const long long bad = read_tabular_rows(src_, sorted_ids, sorted_x_.data(), sorted_y_.data());
  const std::size_t dx = src_.d_in, dy = src_.d_out;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::size_t slot = order[i];
    std::copy_n(&sorted_x_[i * dx], dx, &hx_(slot, 0));
    std::copy_n(&sorted_y_[i * dy], dy, &hy_(slot, 0));
  }
  Kokkos::deep_copy(x_, hx_);
  Kokkos::deep_copy(y_, hy_);
  Kokkos::deep_copy(ids_, hids_);
  return bad;
}

}  // namespace hpct
