// What a tool does with an exception that is not an hpct::Error (core/error.hpp's run_tool): one
// line instead of a crash, and no rank of an MPI job left waiting for one that stopped.
#include "core/error.hpp"

#include <mpi.h>

#include <cstring>
#include <new>

namespace hpct {

bool is_allocation_failure(const std::exception& e) {
  return dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
         std::strstr(e.what(), "failed to allocate") != nullptr;
}

std::string first_line(const std::exception& e) {
  std::string s = e.what();
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

int tool_exception(const char* tool, const std::exception& e) {
  const bool memory = is_allocation_failure(e);
  std::fprintf(stderr, "%s: %s%s\n", tool, memory ? "out of memory: " : "internal error: ", first_line(e).c_str());
  int started = 0, finished = 0, ranks = 1;
  MPI_Initialized(&started);
  MPI_Finalized(&finished);
  if (started && !finished) MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // Another rank may be in (or about to enter) a collective this one will never join.
  if (ranks > 1) MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::failure));
  return static_cast<int>(ExitCode::failure);
}

}  // namespace hpct
