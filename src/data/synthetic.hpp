// Synthetic data sets with a known answer, so the quickstart and the tests need no download.
#pragma once

#include <cstdint>
#include <string>

namespace hpct {

// Friedman #1 regression (Friedman 1991; also scikit-learn's make_friedman1):
//   x ~ U[0, 1]^features (features >= 5; only the first five matter),
//   y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise * N(0, 1).
// The best achievable MSE is noise^2; predicting the mean gives about 24.
// Writes `inputs` [rows, features] and `targets` [rows, 1] as float32. Row i depends only on
// (seed, i), so any subset of rows can be regenerated independently.
void write_friedman1(const std::string& path, std::uint64_t rows, int features, double noise,
                     std::uint64_t seed);

}  // namespace hpct
