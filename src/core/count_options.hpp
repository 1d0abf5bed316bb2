// The numeric options of the data generators (--rows N, --seed K, --noise S), parsed one way for every tool.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace hpct {

struct CountOption {
  CountOption(const char* f, long long* v) : flag(f), value(v) {}
  CountOption(const char* f, double* v) : flag(f), real(v) {}
  const char* flag;            // "--rows"
  long long* value = nullptr;  // a non-negative integer, set when the flag is given
  double* real = nullptr;      // or a finite non-negative real
};

// Parses argv[first..argc) as pairs "FLAG N" with N a non-negative integer (or real, for a double option). Returns 0, or prints
// why (an unknown flag, a missing or bad value; with the usage where it helps) and returns the exit
// code 2 for the caller to return.
inline int parse_count_options(const char* tool, int argc, char** argv, int first, const char* usage,
                               std::initializer_list<CountOption> options) {
  for (int i = first; i < argc; ++i) {
    const std::string flag = argv[i];
    const CountOption* option = nullptr;
    for (const CountOption& o : options)
      if (flag == o.flag) option = &o;
    if (!option) {
      std::fprintf(stderr, "%s: unknown option %s\n%s", tool, flag.c_str(), usage);
      return 2;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n%s", tool, flag.c_str(), usage);
      return 2;
    }
    char* end = nullptr;
    ++i;
    if (option->real) {
      const double v = std::strtod(argv[i], &end);
      if (!end || *end != '\0' || argv[i][0] == '\0' || !std::isfinite(v) || v < 0) {
        std::fprintf(stderr, "%s: %s expects a non-negative number, got '%s'\n", tool, flag.c_str(), argv[i]);
        return 2;
      }
      *option->real = v;
      continue;
    }
    const long long v = std::strtoll(argv[i], &end, 10);
    if (!end || *end != '\0' || argv[i][0] == '\0' || v < 0) {
      std::fprintf(stderr, "%s: %s expects a non-negative integer, got '%s'\n", tool, flag.c_str(), argv[i]);
      return 2;
    }
    *option->value = v;
  }
  return 0;
}

}  // namespace hpct
