// A tool's command line, read the way the tools read it (predict of a network, sample): Kokkos's
// own --kokkos-* options passed over (Kokkos took them), words not starting with "--" kept in order
// as the positional arguments, and every other word handed to `option(name, value)` as an option.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"

namespace hpct {

// `value()` takes the word after the option as its value; an option that wants one at the end of
// the line is refused as "<prefix><name> needs a value" and the usage (a flag does not call it).
// Returns the positional arguments.
template <class Option>
std::vector<std::string> read_tool_options(int argc, char** argv, const std::string& prefix,
                                           const std::string& usage, Option&& option) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--kokkos-", 0) == 0) continue;
    if (a.rfind("--", 0) != 0) {
      positional.push_back(a);
      continue;
    }
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(prefix + a + " needs a value\n" + usage, ExitCode::bad_input);
      return argv[++i];
    };
    option(a, value);
  }
  return positional;
}

}  // namespace hpct
