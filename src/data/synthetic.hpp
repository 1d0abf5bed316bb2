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
void write_friedman1(const std::string& path, std::uint64_t rows, int features, double noise, std::uint64_t seed);

// A HIGGS-like binary classification set (the shape of the UCI HIGGS data: 28 features, of which
// 21 "low-level" ones, here N(0, 1), and 7 "high-level" nonlinear functions of them): the label is
// Bernoulli(sigmoid(z)) with z a fixed nonlinear function of both kinds, so a good model reaches an
// AUC of about 0.73. The same generator as perf/compare_gbdt.py (other random numbers). Writes
// `inputs` [rows, 28] and `targets` [rows] (0/1) as float32; row i depends only on (seed, i).
void write_higgs_like(const std::string& path, std::uint64_t rows, std::uint64_t seed);

}  // namespace hpct
