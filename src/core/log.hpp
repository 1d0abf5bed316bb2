// Rank-0 logging and printf-style formatting. Only rank 0 writes to stdout unless a message is
// explicitly per-rank, so logs of 64-rank jobs stay readable.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace hpct {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string strf(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

class Log {
 public:
  static void set_rank(int rank) { rank_ = rank; }
  // Silences info() (tests set this; errors still print).
  static void set_quiet(bool quiet) { quiet_ = quiet; }
  static int rank() { return rank_; }
  // Rank 0 only.
  static void info(const std::string& line) {
    if (rank_ == 0 && !quiet_) {
      std::fputs(line.c_str(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    }
  }
  // Any rank, prefixed with its number (stderr).
  static void rank_error(const std::string& line) {
    std::fprintf(stderr, "[rank %d] %s\n", rank_, line.c_str());
    std::fflush(stderr);
  }

 private:
  static inline int rank_ = 0;
  static inline bool quiet_ = false;
};

}  // namespace hpct
