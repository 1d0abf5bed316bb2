// The shallow-water solver of apps/wxgen (see shallow_water.hpp): centred differences on a
// collocated grid, classical fourth-order Runge-Kutta in time, periodic in x, free-slip walls in y.
#include "models/gnn/shallow_water.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"

namespace hpct {

namespace {
constexpr double kPiShallowWater = 3.141592653589793;
constexpr double kDay = 86400;
}  // namespace

ShallowWater::ShallowWater(const ShallowWaterConfig& c) : c_(c) {
  if (c.nx < 8 || c.ny < 8)
    throw Error("shallow water: the domain needs at least 8 x 8 cells", ExitCode::bad_input);
  const auto n = static_cast<std::size_t>(c.nx) * static_cast<std::size_t>(c.ny);
  s_.assign(4, std::vector<double>(n, 0.0));
  for (State& k : k_) k.assign(4, std::vector<double>(n, 0.0));
  tmp_.assign(4, std::vector<double>(n, 0.0));
  // Orography: Gaussian hills at seeded places, widths 2-5 cells.
  b_.assign(n, 0.0);
  for (int m = 0; m < c.mountains; ++m) {
    const auto draw = [&](int k) { return rng::uniform(rng::hash(c.seed, 101, static_cast<std::uint64_t>(m), k)); };
    const double ci = draw(0) * c.nx, cj = (0.15 + 0.7 * draw(1)) * c.ny, w = 2 + 3 * draw(2);
    const double height = c.mountain * (0.4 + 0.6 * draw(3));
    for (int j = 0; j < c.ny; ++j)
      for (int i = 0; i < c.nx; ++i) {
        double di = std::abs(i - ci);
        di = std::min(di, c.nx - di);  // periodic in x
        const double dj = j - cj;
        b_[static_cast<std::size_t>(j * c.nx + i)] += height * std::exp(-(di * di + dj * dj) / (2 * w * w));
      }
  }
  for (double& b : b_) b = std::min(b, c.mountain);
  // Start from the forcing's target at rest plus a seeded perturbation of the depth, so the jet's
  // instability starts from noise rather than from a symmetric state; the spin-up does the rest.
  for (int j = 0; j < c.ny; ++j)
    for (int i = 0; i < c.nx; ++i) {
      const auto p = static_cast<std::size_t>(j * c.nx + i);
      const double noise = rng::uniform(rng::hash(c.seed, 202, p)) - 0.5;
      s_[0][p] = target_depth(i, j, 0) + 0.5 * noise;
      s_[3][p] = static_cast<double>(j) / (c.ny - 1);
    }
}

double ShallowWater::sun(int i, int j, double t) const {
  // The sub-solar longitude moves westward once a day across the (periodic) domain; stronger at
  // the equatorward (low y) side.
  const double phase = 2 * kPiShallowWater * (t / kDay + static_cast<double>(i) / c_.nx);
  const double lat = static_cast<double>(j) / (c_.ny - 1);
  return std::max(0.0, std::cos(phase)) * (1.0 - 0.5 * lat);
}

double ShallowWater::target_depth(int i, int j, double t) const {
  const double y = (j + 0.5) * c_.dx, yc = 0.5 * c_.ny * c_.dx;
  const double surface = c_.depth - 0.5 * c_.jet_drop * std::tanh((y - yc) / c_.jet_width) +
                         c_.heating * sun(i, j, t) + storms(i, j, t);
  return surface - b_[static_cast<std::size_t>(j * c_.nx + i)];
}

double ShallowWater::storms(int i, int j, double t) const {
  if (c_.storm_depth == 0) return 0;
  const double Lx = c_.nx * c_.dx, x = (i + 0.5) * c_.dx, y = (j + 0.5) * c_.dx;
  double sum = 0;
  // Storm k is born at k * interval (k may be negative: storms alive at the start) and lives `life`.
  const auto last = static_cast<long long>(std::floor(t / c_.storm_interval));
  const auto first = static_cast<long long>(std::floor((t - c_.storm_life) / c_.storm_interval)) + 1;
  for (long long k = first; k <= last; ++k) {
    const double age = t - static_cast<double>(k) * c_.storm_interval;
    if (age < 0 || age > c_.storm_life) continue;
    const auto key = static_cast<std::uint64_t>(k + (1ll << 40));
    const auto draw = [&](int d) {
      return rng::uniform(rng::hash(c_.seed, 303, key, static_cast<std::uint64_t>(d)));
    };
    const double x0 = draw(0) * Lx + c_.storm_speed * age, y0 = (0.2 + 0.6 * draw(1)) * c_.ny * c_.dx;
    const double depth = c_.storm_depth * (draw(2) < 0.5 ? -1.0 : 1.0) * (0.5 + 0.5 * draw(3));
    double dx = std::fmod(std::abs(x - x0), Lx);
    dx = std::min(dx, Lx - dx);  // periodic in x
    const double r2 = (dx * dx + (y - y0) * (y - y0)) / (c_.storm_radius * c_.storm_radius);
    sum += depth * std::sin(kPiShallowWater * age / c_.storm_life) * std::exp(-0.5 * r2);
  }
  return sum;
}

void ShallowWater::tendency(const State& s, double t, State& out) const {
  const int nx = c_.nx, ny = c_.ny;
  const double inv2dx = 1.0 / (2 * c_.dx), invdx2 = 1.0 / (c_.dx * c_.dx), g = c_.gravity;
  const auto& h = s[0];
  const auto& u = s[1];
  const auto& v = s[2];
  const auto& q = s[3];
  for (int j = 0; j < ny; ++j) {
    // Free-slip walls: the row beyond a wall mirrors the row inside it, v with its sign flipped.
    const int jm = j == 0 ? 0 : j - 1, jp = j == ny - 1 ? ny - 1 : j + 1;
    const double vs_m = j == 0 ? -1.0 : 1.0, vs_p = j == ny - 1 ? -1.0 : 1.0;
    const double f = c_.f0 + c_.beta * ((j + 0.5) * c_.dx - 0.5 * ny * c_.dx);
    for (int i = 0; i < nx; ++i) {
      const int im = i == 0 ? nx - 1 : i - 1, ip = i == nx - 1 ? 0 : i + 1;
      const auto P = static_cast<std::size_t>(j * nx + i);
      const auto W = static_cast<std::size_t>(j * nx + im), E = static_cast<std::size_t>(j * nx + ip);
      const auto S = static_cast<std::size_t>(jm * nx + i), N = static_cast<std::size_t>(jp * nx + i);
      const auto ddx = [&](const std::vector<double>& a) { return (a[E] - a[W]) * inv2dx; };
      const auto ddy = [&](const std::vector<double>& a, double sm, double sp) {
        return (sp * a[N] - sm * a[S]) * inv2dx;
      };
      const auto lap = [&](const std::vector<double>& a, double sm, double sp) {
        return (a[E] + a[W] + sp * a[N] + sm * a[S] - 4 * a[P]) * invdx2;
      };
      const double hx = (h[E] * u[E] - h[W] * u[W]) * inv2dx;
      const double hy = (h[N] * vs_p * v[N] - h[S] * vs_m * v[S]) * inv2dx;
      const double ex = (h[E] + b_[E] - h[W] - b_[W]) * inv2dx;
      const double ey = (h[N] + b_[N] - h[S] - b_[S]) * inv2dx;
      out[0][P] = -hx - hy + c_.relax_depth * (target_depth(i, j, t) - h[P]) + c_.viscosity * lap(h, 1, 1);
      out[1][P] = -u[P] * ddx(u) - v[P] * ddy(u, 1, 1) + f * v[P] - g * ex - c_.drag * u[P] +
                  c_.viscosity * lap(u, 1, 1);
      out[2][P] = -u[P] * ddx(v) - v[P] * ddy(v, vs_m, vs_p) - f * u[P] - g * ey - c_.drag * v[P] +
                  c_.viscosity * lap(v, vs_m, vs_p);
      const double q_target = static_cast<double>(j) / (ny - 1);
      out[3][P] = -u[P] * ddx(q) - v[P] * ddy(q, 1, 1) + c_.relax_tracer * (q_target - q[P]) +
                  c_.viscosity * lap(q, 1, 1);
    }
  }
}

void ShallowWater::advance(double seconds) {
  const long long steps = std::llround(seconds / c_.dt);
  const std::size_t n = s_[0].size();
  static constexpr double kStage[4] = {0.0, 0.5, 0.5, 1.0};
  for (long long step = 0; step < steps; ++step) {
    for (int k = 0; k < 4; ++k) {
      const State* from = &s_;
      if (k > 0) {
        for (int f = 0; f < 4; ++f)
          for (std::size_t p = 0; p < n; ++p) tmp_[f][p] = s_[f][p] + kStage[k] * c_.dt * k_[k - 1][f][p];
        from = &tmp_;
      }
      tendency(*from, time_ + kStage[k] * c_.dt, k_[k]);
    }
    for (int f = 0; f < 4; ++f)
      for (std::size_t p = 0; p < n; ++p)
        s_[f][p] += c_.dt / 6 * (k_[0][f][p] + 2 * k_[1][f][p] + 2 * k_[2][f][p] + k_[3][f][p]);
    time_ += c_.dt;
  }
  for (std::size_t p = 0; p < n; ++p) {
    bool finite = s_[0][p] > 0;
    for (int f = 0; f < 4; ++f) finite = finite && std::isfinite(s_[f][p]);
    if (!finite)
      throw Error(strf("shallow water: the integration became unstable at hour %g (cell %zu, %zu): use a "
                       "smaller time step than --dt %g",
                       time_ / 3600, p % static_cast<std::size_t>(c_.nx), p / static_cast<std::size_t>(c_.nx),
                       c_.dt),
                  ExitCode::bad_input);
  }
}

}  // namespace hpct
