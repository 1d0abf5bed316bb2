// The MPI collectives of Comm and the agreement protocol that raises one rank's error on all (see comm.hpp).
#include "comm/comm.hpp"

#include <limits>

#include "core/heartbeat.hpp"

namespace hpct {

Comm::Waiting::Waiting() { Heartbeat::waiting_current(true); }
Comm::Waiting::~Waiting() { Heartbeat::waiting_current(false); }

Comm::Comm(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Comm::broadcast(std::string& s, int root) const {
  if (size_ == 1) return;
  const Waiting waiting;
  long long n = static_cast<long long>(s.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, root, comm_);
  s.resize(static_cast<std::size_t>(n));
  broadcast(s.data(), s.size(), root);
}

// Note [strings in pieces]: the lengths go first, then the strings in pieces of whole strings of
// about `piece_bytes` (one string longer than that is a piece alone), so a rank holds one piece
// beside the vector rather than a copy of all the strings: an ImageNet file list is ~100 MB, and
// one buffer of it doubled every rank's peak while the list travelled. Every rank cuts the same
// pieces from the lengths; the number of broadcasts grows by one per piece.
void Comm::broadcast(std::vector<std::string>& v, int root, std::uint64_t piece_bytes) const {
  if (size_ == 1) return;
  std::vector<std::uint64_t> lengths;
  if (rank_ == root) {
    lengths.reserve(v.size());
    for (const std::string& s : v) lengths.push_back(s.size());
  }
  broadcast(lengths, root);
  if (rank_ != root) v.assign(lengths.size(), std::string());
  std::string piece;
  for (std::size_t first = 0, last = 0; first < lengths.size(); first = last) {
    std::uint64_t bytes = lengths[last++];
    while (last < lengths.size() && bytes + lengths[last] <= piece_bytes) bytes += lengths[last++];
    piece.clear();
    if (rank_ == root)
      for (std::size_t i = first; i < last; ++i) piece += v[i];
    piece.resize(static_cast<std::size_t>(bytes));
    broadcast(piece.data(), piece.size(), root);
    if (rank_ == root) continue;
    std::size_t at = 0;
    for (std::size_t i = first; i < last; ++i) {
      v[i].assign(piece, at, static_cast<std::size_t>(lengths[i]));
      at += static_cast<std::size_t>(lengths[i]);
    }
  }
}

std::vector<std::string> Comm::gather_to_all(const std::vector<std::string>& local) const {
  // The strings as one buffer and their lengths, gathered as gather_to_all gathers numbers.
  std::vector<std::uint64_t> lengths;
  std::vector<char> bytes;
  for (const std::string& s : local) lengths.push_back(s.size()), bytes.insert(bytes.end(), s.begin(), s.end());
  lengths = gather_to_all(lengths);
  bytes = gather_to_all(bytes);
  std::vector<std::string> all(lengths.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i].assign(bytes.data() + at, static_cast<std::size_t>(lengths[i]));
    at += static_cast<std::size_t>(lengths[i]);
  }
  return all;
}

void Comm::agree_root(const std::string& root_error, ExitCode code, int root) const {
  int failed = rank_ == root && !root_error.empty() ? static_cast<int>(code) : -1;
  broadcast(&failed, 1, root);
  if (failed < 0) return;
  std::string message = root_error;
  broadcast(message, root);
  Error e(message, static_cast<ExitCode>(failed));
  throw e.mark_collective();
}

void Comm::agree(const std::string& local_error, ExitCode code) const {
  const int failed = local_error.empty() ? 0 : 1;
  const int n_failed = sum(failed);
  if (n_failed == 0) return;
  const int first = min(failed ? rank_ : size_);
  const int worst_code = max(failed ? static_cast<int>(code) : 0);
  std::string message = rank_ == first ? local_error : std::string();
  broadcast(message, first);
  if (n_failed < size_ && size_ > 1) message = "rank " + std::to_string(first) + ": " + message;
  // failure (1) outranks bad_input (2) only by meaning, not number: keep the failing rank's code
  // unless ranks disagree, then fall back to the generic failure code.
  ExitCode agreed = static_cast<ExitCode>(worst_code);
  const int min_code = min(failed ? static_cast<int>(code) : 1 << 20);
  if (min_code != worst_code) agreed = ExitCode::failure;
  Error e(message, agreed);
  throw e.mark_collective();
}

void Comm::agree_on_rows(std::uint64_t bad, std::uint64_t first,
                         const std::function<std::string(unsigned long long total)>& message_of_first,
                         ExitCode code) const {
  const std::uint64_t total = sum(bad);
  if (total == 0) return;
  const std::uint64_t global_first = min(first);
  const int owner = min(bad > 0 && first == global_first ? rank_ : size_);
  std::string message;
  if (rank_ == owner) {
    try {
      message = message_of_first(static_cast<unsigned long long>(total));
    } catch (const std::exception& e) {  // still broadcast: the other ranks wait for it
      message = e.what();
    }
  }
  broadcast(message, owner);
  Error e(message, code);
  throw e.mark_collective();
}

void Comm::agree_first(long long index, const std::string& message, ExitCode code) const {
  constexpr long long kNone = std::numeric_limits<long long>::max();
  agree_on_rows(
      index >= 0 ? 1 : 0, static_cast<std::uint64_t>(index >= 0 ? index : kNone),
      [&](unsigned long long) { return message; }, code);
}

}  // namespace hpct
