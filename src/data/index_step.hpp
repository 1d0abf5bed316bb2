// Stepping a row-major multi-index through a block (NetCDF hyperslabs, Zarr chunks and shards).
#pragma once

#include <cstddef>

namespace hpct::data {

// The next index after `i` in a block of `dims` dimensions with these extents, the last dimension
// fastest; each dimension that reaches its extent wraps to 0 and carries into the one before.
// After the block's last index every entry is 0 again.
template <class Index, class Extents>
void step_index(Index& i, const Extents& extent, std::size_t dims) {
  for (std::size_t d = dims; d > 0; --d) {
    if (++i[d - 1] < extent[d - 1]) return;
    i[d - 1] = 0;
  }
}

}  // namespace hpct::data
