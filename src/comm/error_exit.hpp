// How a program's ranks end on an error: the rule of Error::collective in one place, for the
// programs that run on several ranks (the training driver, the diffusion sampler, predict).
#pragma once

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct {

// The lines an error is reported with: `error` before an Error's message ("error: "), `internal`
// before any other exception's ("internal error: "); a message that starts with `named` (not
// empty: "predict: ") names the program already, and gets "error: " alone before it.
struct ErrorLines {
  std::string error, internal, named;
  std::string before(const std::string& message) const {
    return !named.empty() && message.compare(0, named.size(), named) == 0 ? "error: " : error;
  }
};

// Runs `body` (returning the exit code) and ends on an error as every rank can: an Error every rank
// holds (Error::collective) or a job of one rank returns its code, rank 0 printing it; an Error of
// this rank alone, or any other exception, aborts the job so that no other rank waits in a
// collective forever (the line then carries this rank's number).
template <class Body>
int run_ending_on_errors(const Comm& comm, const ErrorLines& lines, Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    if (e.collective() || comm.size() == 1) {
      if (comm.rank() == 0) std::fprintf(stderr, "%s%s\n", lines.before(e.what()).c_str(), e.what());
      return static_cast<int>(e.code());
    }
    Log::rank_error(lines.before(e.what()) + e.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(e.code()));
  } catch (const std::exception& e) {
    // An allocation the machine refused is not an internal error: it says so, on one line.
    Log::rank_error(is_allocation_failure(e) ? lines.before("") + "out of memory: " + first_line(e)
                                             : lines.internal + first_line(e));
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::failure));
  }
  return static_cast<int>(ExitCode::failure);
}

}  // namespace hpct
