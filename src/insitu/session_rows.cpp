// A session's global numbering and the all-to-all that stages each rank's rows (see session_rows.hpp).
#include "insitu/session_rows.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace hpct::insitu {

Numbering Numbering::of(const RollingBuffer& buffer, const Comm& comm) {
  Numbering n;
  n.counts = comm.allgather<std::uint64_t>(buffer.size());
  n.offsets.resize(n.counts.size());
  for (std::size_t r = 0; r < n.counts.size(); ++r) {
    n.offsets[r] = n.rows;
    n.rows += n.counts[r];
  }
  return n;
}

int Numbering::owner(std::uint64_t id) const {
  // The last rank whose first id is <= id: ranks holding nothing share the next rank's offset and
  // are skipped.
  const auto it = std::upper_bound(offsets.begin(), offsets.end(), id);
  return static_cast<int>(it - offsets.begin()) - 1;
}

namespace {

int as_count(std::uint64_t rows) {
  if (rows > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw Error("internal: in-situ session: a row count beyond 2^31 (an id wanted twice?)");
  return static_cast<int>(rows);
}

// Displacements from counts; the total must fit an int too (MPI's displacements are ints).
std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size());
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    d[r] = as_count(total);
    total += static_cast<std::uint64_t>(counts[r]);
  }
  (void)as_count(total);
  return d;
}

}  // namespace

std::uint64_t stage_rows(const RollingBuffer& buffer, const Numbering& numbering, const Comm& comm,
                         const WantedBy& wanted_by, float* x, float* y) {
  const int ranks = comm.size(), me = comm.rank();
  const auto dx = static_cast<std::size_t>(buffer.input_width()),
             dy = static_cast<std::size_t>(buffer.target_width());
  const std::size_t d = dx + dy;
  const std::uint64_t my_first = numbering.offsets[static_cast<std::size_t>(me)];
  const std::uint64_t my_end = my_first + numbering.counts[static_cast<std::size_t>(me)];
  // The same answer on every rank, so no rank throws alone before the collective; with it, every
  // count and displacement below fits an int (the lists name each id at most once in all).
  if (numbering.rows > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw Error("in-situ session: more than 2^31 samples over all ranks' buffers; lower buffer_capacity");

  // Send side: for every rank, in its list's order, the rows this rank owns (Note [staged shard]).
  std::vector<float> send;
  std::vector<int> send_counts(static_cast<std::size_t>(ranks), 0);
  send.reserve(static_cast<std::size_t>(buffer.size()) * d);  // at most every held row once
  for (int q = 0; q < ranks; ++q) {
    if (q == me) continue;  // this rank's own rows are copied straight from the buffer below
    std::uint64_t n = 0;
    for (const std::uint64_t id : wanted_by(q)) {
      if (id < my_first || id >= my_end) continue;
      const std::uint64_t i = id - my_first;
      send.insert(send.end(), buffer.x(i), buffer.x(i) + dx);
      send.insert(send.end(), buffer.y(i), buffer.y(i) + dy);
      ++n;
    }
    send_counts[static_cast<std::size_t>(q)] = as_count(n);
  }

  // Receive side: how many of this rank's rows each owner sends.
  const std::vector<std::uint64_t> mine = wanted_by(me);
  std::vector<int> owners(mine.size());
  std::vector<std::uint64_t> from(static_cast<std::size_t>(ranks), 0);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (mine[i] >= numbering.rows) throw Error("internal: in-situ session row id beyond the session");
    owners[i] = numbering.owner(mine[i]);
    if (owners[i] != me) ++from[static_cast<std::size_t>(owners[i])];
  }
  std::vector<int> recv_counts(from.size());
  for (std::size_t r = 0; r < from.size(); ++r) recv_counts[r] = as_count(from[r]);
  const std::vector<int> send_displs = displacements(send_counts), recv_displs = displacements(recv_counts);
  std::vector<float> recv(static_cast<std::size_t>(recv_displs.back() + recv_counts.back()) * d);

  MPI_Datatype row = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(d), MPI_FLOAT, &row);
  MPI_Type_commit(&row);
  int rc = MPI_SUCCESS;
  {
    const Comm::Waiting waiting;
    rc = MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), row, recv.data(), recv_counts.data(),
                       recv_displs.data(), row, comm.raw());
  }
  MPI_Type_free(&row);
  if (rc != MPI_SUCCESS) throw Error("in-situ session: MPI_Alltoallv of the session's rows failed");

  // Each owner's rows arrive in this rank's list order; interleave them back into that order.
  std::vector<std::uint64_t> cursor(recv_displs.begin(), recv_displs.end());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (owners[i] == me) {
      std::copy_n(buffer.x(mine[i] - my_first), dx, x + i * dx);
      std::copy_n(buffer.y(mine[i] - my_first), dy, y + i * dy);
      continue;
    }
    const float* r = &recv[cursor[static_cast<std::size_t>(owners[i])]++ * d];
    std::copy_n(r, dx, x + i * dx);
    std::copy_n(r + dx, dy, y + i * dy);
  }
  return mine.size();
}

}  // namespace hpct::insitu
