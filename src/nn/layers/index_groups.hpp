// IndexGroups: positions [0, m) grouped by an integer key in [0, keys) (CSR form: offsets and an
// order), and the two row kernels built on it that Gather, ScatterAdd and Embedding share:
// gather_rows (dst[p] = src[key[p]]) and sum_groups (dst[k] = sum of src[p] over key[p] == k).
//
// Note [deterministic index sums]: a sum over "all positions with key k" written with atomics
// would add in thread order, so results would change from run to run and between thread counts.
// Instead a stable counting sort lists each group's positions in ascending order, and one work
// item per (key, column) adds them in that order: every output element is written by one thread,
// always in the same order, on every backend. Two ways to build the groups, both over buffers
// allocated once in the constructor, so building never allocates:
//  - build(): on the host, with key validation (Gather and ScatterAdd, once per index set); on a GPU
//    build that is a copy of the keys to the host and of the groups back;
//  - group_on_device(): without leaving the device (Embedding, every backward; Note [device grouping]).
//
// Note [device grouping]: integer atomics count each key (exact, so deterministic), a scan turns
// the counts into group starts, and one work item per non-empty key walks the positions in
// ascending order and lists its own: the order is the one the host sort gives, with no float
// atomic and no host round trip. The walk costs O(m) per non-empty key, O(m^2) at worst: fine for
// the batch-sized index sets of embeddings (m in the thousands); a device radix sort is the upgrade
// for much larger ones. touched() is not filled: the consumer runs over every key and skips the
// empty groups, so no count has to come back to the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "nn/elementwise.hpp"
#include "nn/layer.hpp"

namespace hpct::nn {

class IndexGroups {
 public:
  IndexGroups() = default;
  // Buffers for up to `max_positions` positions and `max_keys` keys (the only allocation).
  IndexGroups(const std::string& name, std::int64_t max_positions, std::int64_t max_keys);

  // The host buffer to write the m keys into before build() (a view of keys() on host backends).
  const HostView1<int>& host_keys() const { return h_keys_; }
  // Copies keys() rows [0, m) to host_keys() (device backends; a no-op on the host).
  void pull_keys(std::int64_t m);
  // Groups positions [0, m) by host_keys() into num_keys groups and copies the result to the
  // device. A key outside [0, num_keys) throws an Error naming `what` and the position.
  void build(std::int64_t m, std::int64_t num_keys, const std::string& what);
  // build() from a host list of keys (Gather's and ScatterAdd's set_indices). Too many keys is the
  // capacity error of build(), so nothing is copied past host_keys().
  void build_from(const std::vector<int>& keys, std::int64_t num_keys, const std::string& what);
  // Groups positions [0, m) by keys() on the device (Note [device grouping]); every key must be in
  // [0, num_keys) already (callers clamp). Fills offsets() and order(), not touched().
  void group_on_device(std::int64_t m, std::int64_t num_keys);

  const View1<int>& keys() const { return keys_; }  // [m]: key of each position
  const View1<int>& offsets() const {
    return offsets_;
  }                                                   // [num_keys + 1]: group k is order[offsets[k], offsets[k+1])
  const View1<int>& order() const { return order_; }  // [m]: positions, grouped, ascending within a group
  const View1<int>& touched() const {
    return touched_;
  }  // [touched_count()]: keys with a non-empty group, ascending
  std::int64_t positions() const { return m_; }
  std::int64_t num_keys() const { return num_keys_; }
  std::int64_t touched_count() const { return touched_count_; }  // after build() only
  std::int64_t max_positions() const { return static_cast<std::int64_t>(keys_.extent(0)); }
  std::int64_t max_keys() const { return static_cast<std::int64_t>(offsets_.extent(0)) - 1; }

 private:
  View1<int> keys_, offsets_, order_, touched_;
  void check_capacity(std::int64_t m, std::int64_t num_keys, const std::string& what) const;
  HostView1<int> h_keys_, h_offsets_, h_order_, h_touched_;
  std::int64_t m_ = 0, num_keys_ = 0, touched_count_ = 0;
};

// dst(p, j) = src(key(p), j) for p in [0, m) (plus dst(p, j) when accumulating).
template <class Matrix>
void gather_rows(const char* label, const Matrix& src, const View1<int>& key, const Matrix& dst, std::int64_t m,
                 bool accumulate) {
  using S = typename Matrix::non_const_value_type;
  const int cols = static_cast<int>(dst.extent(1));
  for_each_cell(
      label, static_cast<int>(m), cols, KOKKOS_LAMBDA(const int p, const int j) {
        const S v = src(key(p), j);
        dst(p, j) = accumulate ? dst(p, j) + v : v;
      });
}

// dst(k, j) = sum over the positions p of group k, ascending, of src(p, j), for every key k in
// [0, num_keys) (an empty group gives 0); plus dst(k, j) when accumulating.
template <class Matrix>
void sum_groups(const char* label, const Matrix& src, const IndexGroups& groups, const Matrix& dst,
                bool accumulate) {
  using S = typename Matrix::non_const_value_type;
  const auto offsets = groups.offsets();
  const auto order = groups.order();
  const int cols = static_cast<int>(dst.extent(1));
  for_each_cell(
      label, static_cast<int>(groups.num_keys()), cols, KOKKOS_LAMBDA(const int k, const int j) {
        S s = accumulate ? dst(k, j) : S(0);
        for (int o = offsets(k); o < offsets(k + 1); ++o) s += src(order(o), j);
        dst(k, j) = s;
      });
}

}  // namespace hpct::nn
