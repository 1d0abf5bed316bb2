// The host counting sort and the device grouping behind IndexGroups (see index_groups.hpp).
#include "nn/layers/index_groups.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hpct::nn {

// Without a zero fill: a build writes every element its users read (the first m keys and order
// entries, num_keys + 1 offsets, touched_count keys), and only the pages a batch needs are touched.
IndexGroups::IndexGroups(const std::string& name, std::int64_t max_positions, std::int64_t max_keys)
    : keys_(Kokkos::view_alloc(Kokkos::WithoutInitializing, name + "/keys"),
            static_cast<std::size_t>(max_positions)),
      offsets_(Kokkos::view_alloc(Kokkos::WithoutInitializing, name + "/offsets"),
               static_cast<std::size_t>(max_keys + 1)),
      order_(Kokkos::view_alloc(Kokkos::WithoutInitializing, name + "/order"),
             static_cast<std::size_t>(max_positions)),
      touched_(Kokkos::view_alloc(Kokkos::WithoutInitializing, name + "/touched"),
               static_cast<std::size_t>(max_positions)) {
  h_keys_ = Kokkos::create_mirror_view(keys_);
  h_offsets_ = Kokkos::create_mirror_view(offsets_);
  h_order_ = Kokkos::create_mirror_view(order_);
  h_touched_ = Kokkos::create_mirror_view(touched_);
}

namespace {
// Copies the first n elements host -> device; nothing to do when they share memory.
void push(const View1<int>& dev, const HostView1<int>& host, std::int64_t n) {
  if (n <= 0 || dev.data() == host.data()) return;
  const auto range = Kokkos::make_pair(std::size_t(0), static_cast<std::size_t>(n));
  Kokkos::deep_copy(Kokkos::subview(dev, range), Kokkos::subview(host, range));
}
}  // namespace

void IndexGroups::pull_keys(std::int64_t m) {
  if (m <= 0 || keys_.data() == h_keys_.data()) return;
  const auto range = Kokkos::make_pair(std::size_t(0), static_cast<std::size_t>(m));
  Kokkos::deep_copy(Kokkos::subview(h_keys_, range), Kokkos::subview(keys_, range));
}

void IndexGroups::check_capacity(std::int64_t m, std::int64_t num_keys, const std::string& what) const {
  if (m < 0 || m > max_positions() || num_keys < 0 || num_keys > max_keys())
    throw Error("internal: " + what + ": " + std::to_string(m) + " indices into " + std::to_string(num_keys) +
                " rows exceed the capacity (" + std::to_string(max_positions()) + " indices, " +
                std::to_string(max_keys()) + " rows)");
}

void IndexGroups::group_on_device(std::int64_t m, std::int64_t num_keys) {
  if (m < 0 || m > max_positions() || num_keys < 0 || num_keys > max_keys())
    check_capacity(m, num_keys, "index groups");  // builds the message only when it fails
  const auto keys = keys_, offsets = offsets_, order = order_;
  const int positions = static_cast<int>(m), count = static_cast<int>(num_keys);
  // Counts at offsets(k + 1); exact integer atomics, so the same counts on every run.
  Kokkos::parallel_for(
      "groups_zero", range(0, count + 1), KOKKOS_LAMBDA(const int k) { offsets(k) = 0; });
  Kokkos::parallel_for(
      "groups_count", range(0, positions),
      KOKKOS_LAMBDA(const int p) { Kokkos::atomic_add(&offsets(keys(p) + 1), 1); });
  // Inclusive scan: offsets(k) = positions with a key below k = the start of group k.
  Kokkos::parallel_scan(
      "groups_scan", range(0, count + 1), KOKKOS_LAMBDA(const int k, int& run, const bool final) {
        const int c = offsets(k);
        run += c;
        if (final) offsets(k) = run;
      });
  // Each non-empty group lists its positions in ascending order (Note [device grouping]).
  Kokkos::parallel_for(
      "groups_place", range(0, count), KOKKOS_LAMBDA(const int k) {
        int o = offsets(k);
        const int end = offsets(k + 1);
        for (int p = 0; o < end && p < positions; ++p)
          if (keys(p) == k) order(o++) = p;
      });
  m_ = m, num_keys_ = num_keys, touched_count_ = -1;
}

void IndexGroups::build_from(const std::vector<int>& keys, std::int64_t num_keys, const std::string& what) {
  const auto m = static_cast<std::int64_t>(keys.size());
  if (m <= max_positions()) std::copy(keys.begin(), keys.end(), h_keys_.data());
  build(m, num_keys, what);
}

void IndexGroups::build(std::int64_t m, std::int64_t num_keys, const std::string& what) {
  check_capacity(m, num_keys, what);
  fence();  // the keys may come from a kernel (pull_keys on host backends is no copy)
  for (std::int64_t p = 0; p < m; ++p) {
    const int k = h_keys_(static_cast<std::size_t>(p));
    if (k < 0 || k >= num_keys)
      throw Error(what + ": index " + std::to_string(k) + " at position " + std::to_string(p) + " is outside [0, " +
                      std::to_string(num_keys) + ")",
                  ExitCode::bad_input);
  }
  // Stable counting sort: count each key at offsets[k + 1], prefix-sum to group starts, place
  // positions in ascending order advancing offsets[k], then shift back so offsets[k] is the start.
  for (std::int64_t k = 0; k <= num_keys; ++k) h_offsets_(static_cast<std::size_t>(k)) = 0;
  for (std::int64_t p = 0; p < m; ++p)
    ++h_offsets_(static_cast<std::size_t>(h_keys_(static_cast<std::size_t>(p)) + 1));
  for (std::int64_t k = 0; k < num_keys; ++k)
    h_offsets_(static_cast<std::size_t>(k + 1)) += h_offsets_(static_cast<std::size_t>(k));
  for (std::int64_t p = 0; p < m; ++p) {
    const auto k = static_cast<std::size_t>(h_keys_(static_cast<std::size_t>(p)));
    h_order_(static_cast<std::size_t>(h_offsets_(k)++)) = static_cast<int>(p);
  }
  for (std::int64_t k = num_keys; k > 0; --k)
    h_offsets_(static_cast<std::size_t>(k)) = h_offsets_(static_cast<std::size_t>(k - 1));
  h_offsets_(0) = 0;
  touched_count_ = 0;
  for (std::int64_t k = 0; k < num_keys; ++k)
    if (h_offsets_(static_cast<std::size_t>(k + 1)) > h_offsets_(static_cast<std::size_t>(k)))
      h_touched_(static_cast<std::size_t>(touched_count_++)) = static_cast<int>(k);
  m_ = m, num_keys_ = num_keys;
  push(keys_, h_keys_, m);
  push(offsets_, h_offsets_, num_keys + 1);
  push(order_, h_order_, m);
  push(touched_, h_touched_, touched_count_);
}

}  // namespace hpct::nn
