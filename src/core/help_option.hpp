// `--help` for every program: the usage on stdout and exit status 0 (a request, not a mistake), as
// `train --help` answers; any other misuse of a command line keeps the usage on stderr and status 2.
#pragma once

#include <cstdio>
#include <cstring>

namespace hpct {

// Whether the command line asks for --help (or -h) anywhere.
inline bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

// Prints the usage to stdout when `print` (under MPI: rank 0 only); the exit status of a --help run.
inline int print_usage(const char* usage, bool print = true) {
  if (print) std::fputs(usage, stdout);
  return 0;
}

}  // namespace hpct
