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
  // Silences info() and progress() (tests set this; errors still print).
  static void set_quiet(bool quiet) { quiet_ = quiet; }
  static int rank() { return rank_; }
  // Rank 0 only.
  static void info(const std::string& line) {
    if (rank_ == 0 && !quiet_) {
      end_progress_line();
      std::fputs(line.c_str(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    }
  }
  // Any rank, prefixed with its number (stderr).
  static void rank_error(const std::string& line) {
    end_progress_line();
    std::fprintf(stderr, "[rank %d] %s\n", rank_, line.c_str());
    std::fflush(stderr);
  }

  // Rank 0's step progress line. On a terminal it is redrawn in place ('\r') behind a bar of
  // `fraction` done, and the next info() line starts below it; in a file or pipe it is a plain
  // info() line, so logs stay one line per event.
  static void progress(const std::string& line, double fraction);
  // "[#########-----------]  45%": the bar progress() draws, `width` characters between brackets.
  static std::string progress_bar(double fraction, int width);
  // In-place redrawing on or off (tests); by default on when stdout is a terminal with a size, or
  // as HPCTRAIN_PROGRESS=bar|lines says (log.cpp, "terminal detection").
  static void set_terminal(bool terminal) { terminal_ = terminal ? 1 : 0; }

 private:
  static void end_progress_line() {
    if (progress_open_) {
      std::fputc('\n', stdout);
      std::fflush(stdout);
      progress_open_ = false;
    }
  }

  static inline int rank_ = 0;
  static inline bool quiet_ = false;
  static inline int terminal_ = -1;  // -1: not yet asked
  static inline bool progress_open_ = false;  // a progress line waits for its newline
};

}  // namespace hpct
