// Probabilistic scores of downscaling ensembles against the truth, with the coarse-copy baseline.
#pragma once

#include <cstdint>
#include <string>

namespace hpct {

// Sums over (context, fine cell) values, so ranks add their partial sums before finish().
struct EnsembleScores {
  double values = 0;        // number of (context, cell) pairs
  double sse_mean = 0;      // sum (ensemble mean - truth)^2
  double crps = 0;          // sum of the ensemble CRPS: mean|x_m - y| - 1/(2 M^2) sum_{m,m'} |x_m - x_m'|
  double variance = 0;      // sum of the unbiased ensemble variance (M - 1 denominator)
  double sse_baseline = 0;  // sum (coarse cell mean - truth)^2
  double abs_baseline = 0;  // sum |coarse cell mean - truth| (the CRPS of a deterministic forecast)

  // truth [n, nf], ensembles [n, M, nf], coarse [n] (the target cell's coarse mean, context column 0).
  void add(const float* truth, const float* ensembles, const float* coarse, std::uint64_t n, int members, int nf);
  double rmse() const;
  double baseline_rmse() const;
  double mean_crps() const;
  double baseline_crps() const;
  // sqrt(mean ensemble variance) / RMSE of the ensemble mean; about 1 for a calibrated ensemble
  // (strictly sqrt((M+1)/M) * spread / skill is the calibrated-ensemble identity).
  double spread_skill() const;
  std::string report(int members) const;
};

}  // namespace hpct
