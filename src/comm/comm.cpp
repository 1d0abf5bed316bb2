// The MPI collectives of Comm and the agreement protocol that raises one rank's error on all (see comm.hpp).
#include "comm/comm.hpp"

#include <limits>

namespace hpct {

Comm::Comm(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Comm::broadcast(std::string& s, int root) const {
  if (size_ == 1) return;
  long long n = static_cast<long long>(s.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, root, comm_);
  s.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, root, comm_);
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

void Comm::agree_first(long long index, const std::string& message, ExitCode code) const {
  constexpr long long kNone = std::numeric_limits<long long>::max();
  const long long first = min(index >= 0 ? index : kNone);
  if (first == kNone) return;
  const int owner = min(index == first ? rank_ : size_);  // the lowest rank that found it
  std::string m = rank_ == owner ? message : std::string();
  broadcast(m, owner);
  Error e(m, code);
  throw e.mark_collective();
}

}  // namespace hpct
