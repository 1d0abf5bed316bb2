// The DDPM noise schedule (betas, cumulative alpha products, posterior variances) for T steps.
#pragma once

#include <string>
#include <vector>

namespace hpct {

// Timesteps are 0-based: step i in [0, T) adds noise beta[i]; abar[i] = prod_{j<=i} (1 - beta[j]);
// a sample at step i is x_i = sqrt(abar[i]) x_0 + sqrt(1 - abar[i]) eps.
struct NoiseSchedule {
  std::string kind;
  int steps = 0;
  std::vector<double> beta, alpha, abar;
  // Variance of q(x_{i-1} | x_i, x_0): beta[i] (1 - abar[i-1]) / (1 - abar[i]); 0 at i = 0.
  std::vector<double> posterior_variance;

  // Nichol & Dhariwal (2021): f(u) = cos^2((u/T + s)/(1 + s) pi/2), beta[i] = min(1 - f(i+1)/f(i),
  // max_beta); abar is then recomputed from the clipped betas.
  static NoiseSchedule cosine(int steps, double s = 0.008, double max_beta = 0.999);
  // Ho et al. (2020) linear betas from 1e-4 to 0.02 for T = 1000, rescaled by 1000/T so that a short
  // schedule still ends near pure noise (beta_end capped at max_beta).
  static NoiseSchedule linear(int steps, double max_beta = 0.999);
  // "cosine" or "linear"; throws on another name.
  static NoiseSchedule make(const std::string& kind, int steps);
};

}  // namespace hpct
