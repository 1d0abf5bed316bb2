// Doubles in text a user reads back: configuration lines and messages show a value as it was written.
#pragma once

#include <charconv>
#include <string>

namespace hpct {

// A double in the fewest decimal digits that read back as the same double ("0.1", "1e-05", "3"):
// a model's configuration line shows a value as the deck wrote it (not to_string's "0.100000" or
// %.17g's "0.10000000000000001"), and parsing the line gives the same double back (Note [stored
// configuration] in models/registry.hpp).
inline std::string real_text(double v) {
  char b[32];
  const std::to_chars_result r = std::to_chars(b, b + sizeof(b), v);
  return std::string(b, r.ptr);
}

}  // namespace hpct
