// Construction of the cosine and linear noise schedules.
#include "models/diffusion/diffusion_schedule.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace hpct {

namespace {
void finish(NoiseSchedule& s) {
  const auto T = static_cast<std::size_t>(s.steps);
  s.alpha.resize(T);
  s.abar.resize(T);
  s.posterior_variance.resize(T);
  double prod = 1.0;
  for (std::size_t i = 0; i < T; ++i) {
    s.alpha[i] = 1.0 - s.beta[i];
    const double prev = prod;
    prod *= s.alpha[i];
    s.abar[i] = prod;
    s.posterior_variance[i] = i == 0 ? 0.0 : s.beta[i] * (1.0 - prev) / (1.0 - prod);
  }
}
}  // namespace

NoiseSchedule NoiseSchedule::cosine(int steps, double s, double max_beta) {
  if (steps < 1) throw Error("noise schedule needs at least one step", ExitCode::bad_input);
  NoiseSchedule out;
  out.kind = "cosine";
  out.steps = steps;
  const double pi = 3.14159265358979323846;
  auto f = [&](double u) {
    const double c = std::cos((u / steps + s) / (1.0 + s) * pi / 2.0);
    return c * c;
  };
  for (int i = 0; i < steps; ++i) out.beta.push_back(std::min(1.0 - f(i + 1) / f(i), max_beta));
  finish(out);
  return out;
}

NoiseSchedule NoiseSchedule::linear(int steps, double max_beta) {
  if (steps < 1) throw Error("noise schedule needs at least one step", ExitCode::bad_input);
  NoiseSchedule out;
  out.kind = "linear";
  out.steps = steps;
  const double scale = 1000.0 / steps;
  const double b0 = std::min(1e-4 * scale, max_beta), b1 = std::min(0.02 * scale, max_beta);
  for (int i = 0; i < steps; ++i) out.beta.push_back(steps == 1 ? b1 : b0 + (b1 - b0) * i / (steps - 1));
  finish(out);
  return out;
}

NoiseSchedule NoiseSchedule::make(const std::string& kind, int steps) {
  if (kind == "cosine") return cosine(steps);
  if (kind == "linear") return linear(steps);
  throw Error("unknown noise schedule '" + kind + "' (cosine or linear)", ExitCode::bad_input);
}

}  // namespace hpct
