// The (seed, epoch) permutation and the split of each step over micro-batches and ranks (see epoch_order.hpp).
#include "data/epoch_order.hpp"

#include <algorithm>
#include <numeric>

#include "core/rng.hpp"

namespace hpct {

EpochOrder::EpochOrder(std::uint64_t n, std::uint64_t batch_per_rank, int ranks, int accumulation,
                       std::uint64_t seed, bool shuffle)
    : n_(n),
      batch_(batch_per_rank),
      global_batch_(batch_per_rank * static_cast<std::uint64_t>(ranks) * static_cast<std::uint64_t>(accumulation)),
      seed_(seed),
      ranks_(ranks),
      accumulation_(accumulation),
      shuffle_(shuffle) {}

std::uint64_t EpochOrder::step_samples(std::uint64_t step) const {
  const std::uint64_t begin = step * global_batch_;
  return begin >= n_ ? 0 : std::min(global_batch_, n_ - begin);
}

std::pair<std::uint64_t, std::uint64_t> EpochOrder::slice(std::uint64_t step, int micro, int rank) const {
  const std::uint64_t begin = step * global_batch_ + static_cast<std::uint64_t>(micro) * batch_ * ranks_ +
                              static_cast<std::uint64_t>(rank) * batch_;
  const std::uint64_t b = std::min(begin, n_);
  return {b, std::min(begin + batch_, n_)};
}

std::vector<std::uint64_t> EpochOrder::permutation(std::uint64_t epoch) const {
  std::vector<std::uint64_t> p(n_);
  std::iota(p.begin(), p.end(), 0);
  if (!shuffle_) return p;
  // Fisher-Yates driven by the counter-based hash of (seed, epoch, i): no state, any rank agrees.
  for (std::uint64_t i = n_; i > 1; --i) {
    const std::uint64_t j = rng::hash(seed_ ^ rng::kShuffleStream, epoch, i) % i;
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

std::uint64_t EpochOrder::rows_per_epoch(int rank) const {
  std::uint64_t rows = 0;
  for (std::uint64_t s = 0; s < steps_per_epoch(); ++s)
    for (int k = 0; k < accumulation_; ++k) {
      const auto r = slice(s, k, rank);
      rows += r.second - r.first;
    }
  return rows;
}

}  // namespace hpct
