// A shallow-water model on a beta-plane channel (fluid depth h, velocities u and v, a passive
// tracer q, static orography b), forced by a relaxation towards a jet and a moving diurnal heating:
// the "real dynamics" apps/wxgen samples hourly into a regional NetCDF data set for the gnn model.
// Equations, parameters and the numerical scheme: docs/wxgen.md.
#pragma once

#include <cstdint>
#include <vector>

namespace hpct {

struct ShallowWaterConfig {
  int nx = 96, ny = 72;              // the whole (outer) domain, cells; x periodic, y walls
  double dx = 25e3;                  // cell size, m (dy = dx)
  double dt = 300;                   // time step, s
  double depth = 100;                // mean fluid depth H0, m
  double jet_drop = 40;              // depth drop across the jet, m (sets the jet speed)
  double jet_width = 300e3;          // m
  double heating = 6;                // amplitude of the diurnal heating's depth target, m
  double mountain = 15;              // highest orography, m
  int mountains = 6;                 // Gaussian hills
  double f0 = 1e-4, beta = 1.6e-11;  // Coriolis f = f0 + beta (y - Ly / 2), 1/s and 1/(m s)
  double gravity = 9.81;
  double viscosity = 5e4;                 // m^2/s on u, v, h, q (damps the grid-scale mode of the collocated grid)
  double drag = 1.0 / (10 * 86400);       // linear drag on u, v, 1/s
  double relax_depth = 1.0 / (6 * 3600);  // relaxation of h towards its target, 1/s
  double relax_tracer = 1.0 / (10 * 86400);
  // Travelling storms: depth anomalies of the target (+-storm_depth, Gaussian of storm_radius) born
  // every storm_interval at seeded places, drifting east at storm_speed, living storm_life; they
  // make the weather differ from one day to the next (the heating alone repeats daily).
  double storm_depth = 4, storm_radius = 150e3, storm_speed = 8, storm_interval = 12 * 3600.0,
         storm_life = 2 * 86400.0;
  std::uint64_t seed = 1;  // orography, storms and initial perturbation
};

class ShallowWater {
 public:
  explicit ShallowWater(const ShallowWaterConfig& c);
  // Advances by `seconds` (a whole number of time steps); throws hpct::Error when a value is no
  // longer finite or the depth is no longer positive (naming the model time).
  void advance(double seconds);
  double time() const { return time_; }  // s since the start
  const ShallowWaterConfig& config() const { return c_; }
  // Fields on the outer grid, row-major [ny][nx].
  const std::vector<double>& h() const { return s_[0]; }
  const std::vector<double>& u() const { return s_[1]; }
  const std::vector<double>& v() const { return s_[2]; }
  const std::vector<double>& q() const { return s_[3]; }
  const std::vector<double>& orography() const { return b_; }
  // The diurnal heating in [0, 1] at cell (i, j) and time t (the forcing variable of the data set).
  double sun(int i, int j, double t) const;

 private:
  using State = std::vector<std::vector<double>>;  // h, u, v, q
  void tendency(const State& s, double t, State& out) const;
  double target_depth(int i, int j, double t) const;  // surface target minus orography
  double storms(int i, int j, double t) const;        // the storms' part of the surface target
  ShallowWaterConfig c_;
  double time_ = 0;
  State s_, k_[4], tmp_;
  std::vector<double> b_;
};

}  // namespace hpct
