// The numbers a tool's options take (--clip 3, --lead-steps 24), read whole or refused with the
// option's name: "12x" or "abc" is an error, not 12 or 0 as atoi/atof would read them.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace hpct {

// The integer at the start of `text` when it runs up to `stop` (the end, or a separator such as the
// ':' of "1:40"); false for anything else ("", "x", "12x", out of range).
inline bool leading_integer(const char* text, long long& out, char stop = '\0') {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(text, &end, 10);
  if (end == text || *end != stop || errno == ERANGE) return false;
  out = x;
  return true;
}

// `option` names the option as the message should show it ("predict: --clip").
inline long long cli_integer(const std::string& option, const std::string& value) {
  long long x = 0;
  if (!leading_integer(value.c_str(), x))
    throw Error(option + " expects an integer, got '" + value + "'", ExitCode::bad_input);
  return x;
}

inline double cli_real(const std::string& option, const std::string& value) {
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0' || !std::isfinite(x))
    throw Error(option + " expects a finite number, got '" + value + "'", ExitCode::bad_input);
  return x;
}

}  // namespace hpct
