// The parts of core/error.hpp that are not inline: what a tool does with an exception that is not an
// hpct::Error (run_tool: one line instead of a crash, and no rank of an MPI job left waiting for one
// that stopped), and the files whose messages name rows (Note [Parquet rows in messages]).
#include "core/error.hpp"

#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <new>
#include <set>

namespace hpct {

namespace {

std::mutex row_files_mutex;
std::set<std::string>& row_files() {
  static std::set<std::string> files;
  return files;
}

}  // namespace

void name_rows_not_lines(const std::string& file) {
  const std::lock_guard<std::mutex> hold(row_files_mutex);
  row_files().insert(file);
}

bool names_rows_not_lines(const std::string& file) {
  std::string ext = file.size() >= 8 ? file.substr(file.size() - 8) : "";
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".parquet") return true;  // as io::is_parquet takes it
  const std::lock_guard<std::mutex> hold(row_files_mutex);
  return row_files().count(file) > 0;
}

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
