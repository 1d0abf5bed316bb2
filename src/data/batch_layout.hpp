// Rows laid out in processing order (the epoch shard's, the evaluator's block): every field as 32-bit
// words, ragged fields with the element each row starts at; from them, the offsets of each
// micro-batch and the Batch of a block of rows. Shared so the two layouts cannot drift apart.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kokkos_compat.hpp"
#include "data/batch.hpp"
#include "data/field.hpp"

namespace hpct {

// Micro-batch m covers rows [bounds[m], bounds[m + 1]); its n + 1 offsets from 0 (Note [ragged
// fields]) go to out[bounds[m] + m, ...], computed from the rows' element starts.
void micro_batch_offsets(const std::vector<std::uint64_t>& starts, const std::vector<std::uint64_t>& bounds,
                         std::uint64_t* out);

// Sets in `b` every field of rows [first, first + n), which are micro-batch m: fixed fields as row
// blocks of `words`, ragged ones as element blocks with their offsets. No allocation.
void fill_fields(Batch& b, const std::vector<FieldSpec>& specs, const std::vector<View1<std::uint32_t>>& words,
                 const std::vector<std::vector<std::uint64_t>>& starts,
                 const std::vector<View1<std::uint64_t>>& batch_offsets, std::uint64_t first, std::uint64_t n,
                 std::uint64_t m);

}  // namespace hpct
