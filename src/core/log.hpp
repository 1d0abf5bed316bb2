// Rank-0 logging, printf-style formatting, and clip_for_log for quoting user text in a line. Only
// rank 0 writes to stdout unless a message is explicitly per-rank, so logs of 64-rank jobs stay
// readable.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <string>

namespace hpct {

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string
strf(const char* fmt, ...) {
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

// Length in bytes of the well-formed UTF-8 character starting at s[pos], or 0 when the bytes there
// are not one (a stray continuation byte, a truncated sequence, an overlong form, a UTF-16
// surrogate, or a code point above U+10FFFF). ASCII, NUL included, is 1.
inline std::size_t utf8_length_at(const std::string& s, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(pos);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) n = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) n = 3, lo = b0 == 0xe0 ? 0xa0 : 0x80, hi = b0 == 0xed ? 0x9f : 0xbf;
  else if (b0 >= 0xf0 && b0 <= 0xf4) n = 4, lo = b0 == 0xf0 ? 0x90 : 0x80, hi = b0 == 0xf4 ? 0x8f : 0xbf;
  else return 0;
  if (pos + n > s.size() || byte(pos + 1) < lo || byte(pos + 1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if ((byte(pos + i) & 0xc0) != 0x80) return 0;
  return n;
}

// User text as a log or error line may quote it: at most `max` bytes of it, never cutting a UTF-8
// character, then "... (N bytes)" when it was longer; control characters and bytes that are not
// UTF-8 appear as \xNN. Note long_values: a deck value or key can be 200,000 characters (a
// generated list, a pasted file); echoed whole it floods the log and hides the message.
inline std::string clip_for_log(const std::string& s, std::size_t max = 60) {
  std::string out;
  std::size_t pos = 0;
  while (pos < s.size()) {
    const std::size_t n = utf8_length_at(s, pos);
    const std::size_t step = n == 0 ? 1 : n;
    if (pos + step > max) break;
    const auto b = static_cast<unsigned char>(s[pos]);
    if (n == 0 || b < 0x20 || b == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", b);
      out += hex;
    } else {
      out.append(s, pos, n);
    }
    pos += step;
  }
  if (pos < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

class Log {
 public:
  static void set_rank(int rank) { rank_ = rank; }
  // Silences info() and progress() (tests set this; errors still print).
  static void set_quiet(bool quiet) { quiet_ = quiet; }
  static bool quiet() { return quiet_; }
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
  static inline int terminal_ = -1;           // -1: not yet asked
  static inline bool progress_open_ = false;  // a progress line waits for its newline
};

// Silences info() and progress() while it lives, where `mute` (the second opening of a file whose
// first opening said it all: train's validation_file equal to data_file); as before after it.
class LogMuted {
 public:
  explicit LogMuted(bool mute) : was_(Log::quiet()) {
    if (mute) Log::set_quiet(true);
  }
  ~LogMuted() { Log::set_quiet(was_); }
  LogMuted(const LogMuted&) = delete;
  LogMuted& operator=(const LogMuted&) = delete;

 private:
  bool was_;
};

}  // namespace hpct
