// Ensemble RMSE, CRPS and spread/skill of downscaling ensembles, and the coarse-copy baseline.
#include "models/diffusion/diffusion_scores.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/log.hpp"

namespace hpct {

void EnsembleScores::add(const float* truth, const float* ens, const float* coarse, std::uint64_t n, int members,
                         int nf) {
  const auto M = static_cast<std::size_t>(members);
  std::vector<double> x(M);
  for (std::uint64_t i = 0; i < n; ++i)
    for (int j = 0; j < nf; ++j) {
      const double y = truth[i * static_cast<std::uint64_t>(nf) + static_cast<std::uint64_t>(j)];
      double mean = 0, abs_err = 0;
      for (std::size_t m = 0; m < M; ++m) {
        x[m] = ens[(i * M + m) * static_cast<std::size_t>(nf) + static_cast<std::size_t>(j)];
        mean += x[m];
        abs_err += std::fabs(x[m] - y);
      }
      mean /= static_cast<double>(M);
      // sum_{m,m'} |x_m - x_m'| from the sorted members: 2 sum_k (2k - M + 1) x_(k).
      std::sort(x.begin(), x.end());
      double pair = 0, var = 0;
      for (std::size_t k = 0; k < M; ++k) {
        pair += 2.0 * (2.0 * static_cast<double>(k) - static_cast<double>(M) + 1.0) * x[k];
        var += (x[k] - mean) * (x[k] - mean);
      }
      values += 1;
      sse_mean += (mean - y) * (mean - y);
      crps += abs_err / static_cast<double>(M) - pair / (2.0 * static_cast<double>(M * M));
      variance += M > 1 ? var / static_cast<double>(M - 1) : 0.0;
      const double b = coarse[i] - y;
      sse_baseline += b * b;
      abs_baseline += std::fabs(b);
    }
}

double EnsembleScores::rmse() const { return std::sqrt(sse_mean / values); }
double EnsembleScores::baseline_rmse() const { return std::sqrt(sse_baseline / values); }
double EnsembleScores::mean_crps() const { return crps / values; }
double EnsembleScores::baseline_crps() const { return abs_baseline / values; }
double EnsembleScores::spread_skill() const { return std::sqrt(variance / values) / rmse(); }

std::string EnsembleScores::report(int members) const {
  return strf(
      "ensemble-mean RMSE %.4f | baseline (coarse mean copied) RMSE %.4f | RMSE ratio %.3f\n"
      "CRPS %.4f | baseline CRPS (MAE) %.4f | spread/skill %.3f (M = %d; x sqrt((M+1)/M) = %.3f)",
      rmse(), baseline_rmse(), rmse() / baseline_rmse(), mean_crps(), baseline_crps(), spread_skill(), members,
      spread_skill() * std::sqrt((members + 1.0) / members));
}

}  // namespace hpct
