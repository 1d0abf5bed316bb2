// FusedVerdicts: the bitwise check of a fused batch against its chunks (see fused_verdicts.hpp).
#include "models/fused_verdicts.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "core/log.hpp"

namespace hpct {

bool FusedVerdicts::fused(int n, int rows, std::size_t unit, const Forward& forward) {
  if (n <= rows) return true;
  auto it = verdicts_.find({n, rows});
  if (it == verdicts_.end())
    it = verdicts_.emplace(std::make_pair(n, rows), same_bits(n, rows, unit, forward)).first;
  return it->second;
}

bool FusedVerdicts::same_bits(int n, int rows, std::size_t unit, const Forward& forward) const {
  // The outputs of `count` rows from row `first` on, copied to `out`.
  const auto outputs = [&](int first, int count, std::vector<float>& out) {
    out.resize(static_cast<std::size_t>(count) * unit);
    const float* y = forward(first, count);
    Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(out.data(), out.size()),
                      Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(y, out.size()));
  };
  std::vector<float> fused, chunk;
  outputs(0, n, fused);
  bool same = true;
  for (int first = 0; first < n && same; first += rows) {
    outputs(first, std::min(rows, n - first), chunk);
    same = std::memcmp(chunk.data(), fused.data() + static_cast<std::size_t>(first) * unit,
                       chunk.size() * sizeof(float)) == 0;
  }
  const std::string gives = same ? "gives the " + words_.outputs + " of its"
                                 : "does not give the " + words_.outputs + " of its; chunk by chunk as";
  Log::info(strf("  %s validation: a batch of %d %s %s chunks of %d alone (Note [%s])", words_.what.c_str(), n,
                 words_.rows.c_str(), gives.c_str(), rows, words_.note.c_str()));
  return same;
}

}  // namespace hpct
