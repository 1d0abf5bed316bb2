// Staging a session's epoch from every rank's buffer (see buffer_shard.hpp).
#include "insitu/buffer_shard.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/field.hpp"

namespace hpct::insitu {

BufferShard::BufferShard(const RollingBuffer& buffer, const Numbering& numbering, const Comm& comm,
                         const EpochOrder& sampler)
    : buffer_(buffer),
      numbering_(numbering),
      comm_(comm),
      sampler_(sampler),
      dx_(static_cast<std::uint64_t>(buffer.input_width())),
      dy_(static_cast<std::uint64_t>(buffer.target_width())) {
  // The same layout every epoch: this rank's slice of each micro-batch, in step order.
  offsets_.push_back(0);
  for (std::uint64_t s = 0; s < sampler_.steps_per_epoch(); ++s)
    for (int k = 0; k < sampler_.accumulation(); ++k) {
      const auto r = sampler_.slice(s, k, comm_.rank());
      offsets_.push_back(offsets_.back() + (r.second - r.first));
    }
  const std::uint64_t rows = std::max<std::uint64_t>(offsets_.back(), 1);
  x_ = View2<float>("insitu_x", rows, dx_);
  y_ = View2<float>("insitu_y", rows, dy_);
  ids_ = View1<std::uint64_t>("insitu_ids", rows);
}

long long BufferShard::load(std::uint64_t epoch) {
  // Every rank computes every rank's list, so the owners know where their rows go (session_rows.hpp).
  const std::vector<std::uint64_t> perm = sampler_.permutation(epoch);
  const WantedBy shard = [&](int q) {
    std::vector<std::uint64_t> ids;
    ids.reserve(sampler_.rows_per_epoch(q));
    for (std::uint64_t s = 0; s < sampler_.steps_per_epoch(); ++s)
      for (int k = 0; k < sampler_.accumulation(); ++k) {
        const auto r = sampler_.slice(s, k, q);
        for (std::uint64_t p = r.first; p < r.second; ++p) ids.push_back(perm[p]);
      }
    return ids;
  };
  const std::vector<std::uint64_t> mine = shard(comm_.rank());
  auto hx = Kokkos::create_mirror_view(x_);
  auto hy = Kokkos::create_mirror_view(y_);
  auto hids = Kokkos::create_mirror_view(ids_);
  std::copy(mine.begin(), mine.end(), hids.data());
  staged_ = std::max(staged_, stage_rows(buffer_, numbering_, comm_, shard, hx.data(), hy.data()));
  Kokkos::deep_copy(x_, hx);
  Kokkos::deep_copy(y_, hy);
  Kokkos::deep_copy(ids_, hids);
  return kNoBadValue;
}

void BufferShard::fill(Batch& b, std::uint64_t step, int micro) const {
  const std::size_t m = index(step, micro);
  const std::uint64_t first = offsets_[m], n = offsets_[m + 1] - first;
  b.set(Batch::kInputs, Tensor<float>(x_.data() + first * dx_,
                                      Shape{static_cast<std::int64_t>(n), static_cast<std::int64_t>(dx_)}));
  b.set(Batch::kTargets, Tensor<float>(y_.data() + first * dy_,
                                       Shape{static_cast<std::int64_t>(n), static_cast<std::int64_t>(dy_)}));
  b.ids = Kokkos::subview(ids_, Kokkos::make_pair(first, first + n));
  b.n = static_cast<int>(n);
}

std::string BufferShard::describe_bad(long long code) const {
  // load() finds none: push rejects NaN/Inf before storing a sample.
  return strf("internal: bad value code %lld in the in-situ buffer, whose pushes are checked", code);
}

}  // namespace hpct::insitu
