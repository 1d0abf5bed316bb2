// One exception type for everything a user can get wrong or a run can hit, carrying where it
// happened (file, line, key) and the process exit code the driver should use.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>

namespace hpct {

// Documented in README.md ("Exit codes"); job scripts rely on these values.
enum class ExitCode : int {
  ok = 0,
  failure = 1,    // internal error, failed write, NaN policy stop
  bad_input = 2,  // deck, command line or data file problem: fix the input and resubmit
  requeue = 3,    // stopped by SIGUSR1/SIGTERM after writing a checkpoint: requeue the job
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::failure)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }
  // True when every rank holds this same error (raised through Comm::agree): the ranks can then
  // exit together; otherwise the program aborts the job so no rank waits in a collective
  // (run_ending_on_errors, comm/error_exit.hpp).
  bool collective() const { return collective_; }
  Error& mark_collective() {
    collective_ = true;
    return *this;
  }

 private:
  ExitCode code_;
  bool collective_ = false;
};

// Note [Parquet rows in messages]: a Parquet file has no lines; where the tables' shared code passes
// a line it is the file's 1-based data row, named "file: row N" (docs/parquet.md). The code that
// opens a Parquet table says so here (the shared code passes only the file's name, and `data_format
// auto` takes a file without the .parquet name by its bytes, PAR1); a name ending in .parquet needs
// no word. For the process's life, from any thread.
void name_rows_not_lines(const std::string& file);
bool names_rows_not_lines(const std::string& file);

// "file:line: key: message", the form every input error takes so users can jump to the spot (a
// Parquet table's "file: row N: key: message", Note [Parquet rows in messages]).
inline std::string where(const std::string& file, int line, const std::string& key) {
  std::string s = file;
  if (line > 0) s += (names_rows_not_lines(file) ? ": row " : ":") + std::to_string(line);
  if (!key.empty()) s += (s.empty() ? "" : ": ") + key;
  return s;
}

[[noreturn]] inline void input_error(const std::string& file, int line, const std::string& key,
                                     const std::string& message) {
  throw Error(where(file, line, key) + ": " + message, ExitCode::bad_input);
}

// Whether `e` reports an allocation the machine refused: std::bad_alloc (Kokkos 4.x's
// RawMemoryAllocationFailure is one), or Kokkos 3.4's std::runtime_error "Kokkos failed to allocate
// memory ..." (core/error.cpp).
bool is_allocation_failure(const std::exception& e);
// e.what() up to its first line break, trailing spaces dropped: Kokkos 3.4 appends a traceback
// paragraph ("Traceback functionality not available") to its messages.
std::string first_line(const std::exception& e);

// Any other exception out of a tool (run_tool): one line "tool: internal error: message" (for
// an allocation failure "tool: out of memory: ..."); where the tool runs on several MPI ranks, the job is
// then aborted with exit code 1, as no other rank can know this one stopped; else returns 1
// (defined in core/runtime.cpp, which holds MPI).
int tool_exception(const char* tool, const std::exception& e);

// A command-line tool's work: an Error becomes one line "tool: message" on stderr and the exit code
// it carries; any other exception (an allocation the machine refused: std::bad_alloc, Kokkos's
// runtime_error) one line too, not a crash with a backtrace (tool_exception); otherwise body's own
// return value.
template <class Body>
int run_tool(const char* tool, const Body& body) {
  try {
    return body();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    return tool_exception(tool, e);
  }
}

}  // namespace hpct
