// The in-place progress line: terminal detection and width, the bar, and redrawing with '\r'.
#include "core/log.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace hpct {

namespace {

// Columns of the terminal on stdout (0: none); a line longer than that would wrap, and '\r' could
// not redraw it.
std::size_t terminal_columns() {
  winsize w{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0) return w.ws_col;
  return 0;
}

// Note (terminal detection): OpenMPI hands each rank's stdout a pseudo-terminal even when mpirun
// writes to a file, so isatty() alone would draw bars into log files. That pty has no size, a
// user's terminal has one: a width is required. HPCTRAIN_PROGRESS=bar|lines overrides the guess
// (e.g. `mpirun -x HPCTRAIN_PROGRESS=bar` at an interactive terminal).
bool progress_in_place() {
  const char* mode = std::getenv("HPCTRAIN_PROGRESS");
  if (mode && std::strcmp(mode, "bar") == 0) return true;
  if (mode && std::strcmp(mode, "lines") == 0) return false;
  return terminal_columns() > 0;
}

}  // namespace

std::string Log::progress_bar(double fraction, int width) {
  if (!std::isfinite(fraction)) fraction = 0;
  fraction = std::min(1.0, std::max(0.0, fraction));
  const int filled = static_cast<int>(std::floor(fraction * width + 1e-9));
  std::string bar = "[";
  bar.append(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(width - filled), '-');
  return bar + strf("] %3d%%", static_cast<int>(std::floor(fraction * 100 + 1e-9)));
}

void Log::progress(const std::string& line, double fraction) {
  if (rank_ != 0 || quiet_) return;
  if (terminal_ < 0) terminal_ = progress_in_place() ? 1 : 0;
  if (terminal_ == 0) {
    info(line);
    return;
  }
  std::string text = progress_bar(fraction, 24) + "  " + line;
  const std::size_t columns = terminal_columns() > 0 ? terminal_columns() : 100;
  if (text.size() >= columns) text.resize(columns - 1);
  // "\x1b[K" clears what a longer previous line left to the right.
  std::fprintf(stdout, "\r%s\x1b[K", text.c_str());
  std::fflush(stdout);
  progress_open_ = true;
}

}  // namespace hpct
