// The rows of a session that one rank needs, moved to it from the ranks that hold them.
//
// Note [global numbering]: a session numbers the samples of all ranks' buffers rank-major, oldest
// first: rank r's i-th oldest sample is global id offset_r + i, offset_r = the exclusive scan of the
// ranks' counts. `train` on an HDF5 file holding rank 0's samples, then rank 1's, ... (each oldest
// first) sees the same ids, so the sampler's (seed, epoch) order and the per-sample noise keys
// coincide.
// Note [staged shard]: no rank ever holds the whole session. Every rank computes the same lists of
// global ids each rank needs (an epoch's shard of the permutation, or a statistics block), so each
// owner knows which of its rows go where without a request round; one MPI_Alltoallv of whole rows
// (inputs and targets packed) moves them; a rank's own rows are copied straight from its buffer.
// A rank stages only its own list (about N / P rows for an epoch), plus the send copy of the rows
// it holds for others.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "comm/comm.hpp"
#include "insitu/buffer.hpp"

namespace hpct::insitu {

// The session's global numbering (Note [global numbering]); the same on every rank.
struct Numbering {
  std::uint64_t rows = 0;              // N, over all ranks
  std::vector<std::uint64_t> counts;   // samples held per rank
  std::vector<std::uint64_t> offsets;  // global id of each rank's oldest sample
  // Collective: every rank's held count.
  static Numbering of(const RollingBuffer& buffer, const Comm& comm);
  int owner(std::uint64_t id) const;
};

// Global ids rank q needs, in the order it wants them. Must give the same list for q on every rank.
using WantedBy = std::function<std::vector<std::uint64_t>(int q)>;

// Collective over `comm`: this rank receives the samples wanted_by(comm.rank()) into x [n, d_in]
// and y [n, d_out] (row-major, n = wanted_by(comm.rank()).size(), sized by the caller), in the
// list's order. Returns n.
std::uint64_t stage_rows(const RollingBuffer& buffer, const Numbering& numbering, const Comm& comm,
                         const WantedBy& wanted_by, float* x, float* y);

}  // namespace hpct::insitu
