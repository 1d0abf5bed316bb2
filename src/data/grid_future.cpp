// One sample of a gridded source whose valid times may lie past the file's end: the inputs of a
// forecast from any initial time, the latest analysis included (wxeval --init; see grid_samples.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/grid_forcings.hpp"
#include "data/grid_samples.hpp"

namespace hpct {

std::vector<double> GridSamples::times() const {
  std::vector<double> t = layout_.time_s;
  if (t.empty())
    for (std::size_t i = 0; i < layout_.times; ++i) t.push_back(static_cast<double>(i));
  return t;
}

std::size_t GridSamples::time_index(double t) const {
  const std::vector<double> all = times();
  const auto it = std::lower_bound(all.begin(), all.end(), t - 0.5);
  return it != all.end() && std::fabs(*it - t) <= 0.5 ? static_cast<std::size_t>(it - all.begin()) : all.size();
}

std::vector<FieldSpec> GridSamples::fields_with_leads(std::size_t leads) const {
  std::vector<FieldSpec> specs = specs_;
  for (FieldSpec& s : specs)
    if (s.name == "targets" || s.name == "forcing") s.row_shape.dim[1] = static_cast<std::int64_t>(leads);
  return specs;
}

void GridSamples::check_same_grid(const GridSamples& other) const {
  const Layout &a = layout_, &b = other.layout_;
  if (a.ny != b.ny || a.nx != b.nx)
    throw Error(strf("%s: a %zu x %zu grid; %s has %zu x %zu", other.file_.c_str(), b.ny, b.nx, file_.c_str(), a.ny,
                     a.nx),
                ExitCode::bad_input);
  // Each point's latitude and longitude where both know them, else the coordinates.
  const bool latlon = a.latlon && b.latlon;
  const auto moved = [&](const std::vector<double>& u, const std::vector<double>& v, bool angle, const char* what) {
    for (std::size_t p = 0; p < u.size() && p < v.size(); ++p)
      if (std::fabs(angle ? std::remainder(u[p] - v[p], 360.0) : u[p] - v[p]) > 1e-4)
        throw Error(strf("%s: its %s %zu is %g; %s has %g (another grid)", other.file_.c_str(), what, p, v[p],
                         file_.c_str(), u[p]),
                    ExitCode::bad_input);
  };
  moved(latlon ? a.lat : a.y, latlon ? b.lat : b.y, false, latlon ? "point's latitude" : "y coordinate");
  moved(latlon ? a.lon : a.x, latlon ? b.lon : b.x, latlon, latlon ? "point's longitude" : "x coordinate");
}

// Note [future forecast]: a forecast from initial time t (any time of the file, its last included)
// needs, at each valid time v_k = t + (k + 1) step: the forcing variables read from the file at v_k
// (an error naming the variable and the first v_k the file does not hold: nothing guesses a forcing
// past the data), the derived forcings computed at v_k, state_day_before and tendency_day_before from
// the states a day before v_k (at or before t for leads up to a day, the limit the samples keep too:
// the file at the initial time, never the truth after it), lead_time, and for a limited-area model
// the boundary strip at v_k: another file's (a global forecast's) states, as the hindcast takes the
// truth's. The file's own states after t are read only as `truth` for scores; the rollout sees none
// of them, so a file truncated at t and the full file give the same forecast.
//
// Note [future inputs]: the file of the latest analysis holds what the forecast reads and no more:
// the states at t - 1 and t (and back to a day before the first valid time for state_day_before,
// one step more for tendency_day_before), forcing variables at the valid times, a --boundary the
// valid times alone. wxeval opens both with forecast_inputs (a key only its opener declares), so
// they need no complete training sample (ar_steps + 2 times); the times are checked here instead,
// where the initial time and the lead count are known: the error names the first one missing with
// every time the forecast needs (exit 2, before anything is written).
void GridSamples::read_future(std::size_t init, std::size_t leads, const GridSamples* boundary,
                              const std::vector<FieldBuffer>& out, std::vector<float>& truth,
                              std::vector<char>& known) const {
  const std::vector<double> all = times();
  const std::size_t n = layout_.ny * layout_.nx, S = state_.size(), F0 = forcing_.size(), A = leads;
  const std::size_t D = derived_forcings_.size(), B = day_before_ ? S : 0, T = tendency_ ? S : 0;
  const std::size_t F = F0 + D + B + T + (lead_ ? 1 : 0);
  const double step = axis_.step_s;
  if ((day_before_ || tendency_) && A > lag_)
    throw Error(strf("%s: derived_forcings %s: %zu lead steps reach beyond a day (%zu steps), where the state a "
                     "day "
                     "before a valid time is not known at the initial time",
                     file_.c_str(), day_before_ ? "state_day_before" : "tendency_day_before", A, lag_),
                ExitCode::bad_input);
  const std::size_t back = (day_before_ || tendency_) ? back_ : 0;
  const auto when = [&](double t) { return layout_.time_s.empty() ? "index " + strf("%g", t) : iso_time(t); };
  const auto span = [&](double a, double b) { return a == b ? when(a) : when(a) + " .. " + when(b); };
  if (init >= all.size())
    throw Error(strf("%s: no initial time index %zu (times 0 .. %zu)", file_.c_str(), init, all.size() - 1),
                ExitCode::bad_input);
  // The times the forecast reads (Note [future inputs]): the first one missing is named with all of them.
  const double t0 = all[init], first_valid = t0 + step, last_valid = t0 + static_cast<double>(A) * step;
  const std::string needs =
      strf("a forecast from %s with %zu lead steps needs the states at ", when(t0).c_str(), A) +
      (step > 0 ? span(t0 - static_cast<double>(1 + back) * step, t0) : when(t0) + " and the step before it") +
      (back ? strf(" (%zu steps before the initial time for %s)", 1 + back,
                   day_before_ ? "state_day_before" : "tendency_day_before")
            : std::string(step > 0 ? " (the initial time and the step before it)" : "")) +
      (F0 && step > 0 ? ", and forcing variables at the valid times " + span(first_valid, last_valid) : "");
  for (std::size_t j = 1 + back; j >= 1 && step > 0; --j)
    if (time_index(t0 - static_cast<double>(j) * step) >= all.size())
      throw Error(file_ + ": " + needs + "; the file has no time " + when(t0 - static_cast<double>(j) * step) +
                      " (its times: " + span(all.front(), all.back()) + ")",
                  ExitCode::bad_input);
  if (step <= 0 || init < 1 + back)  // one time: the step before it is unknown
    throw Error(file_ + ": " + needs + "; the file holds " + span(all.front(), all.back()), ExitCode::bad_input);
  const std::size_t lo = init - 1 - back;  // the first time read: consecutive steps to init (all held)
  const std::size_t hi = std::min(init + A, all.size() - 1), nt = hi - lo + 1;
  std::vector<float> window((S + F0) * nt * n);
  reader()->read(lo, nt, window.data());
  for (std::size_t v = 0; v < (masked_.empty() ? 0 : S + F0); ++v)  // Note [missing data]
    for (std::size_t k = 0; k < nt; ++k)
      for (const std::size_t p : masked_) window[(v * nt + k) * n + p] = fill_[v];
  const auto at = [&](std::size_t v, std::size_t t) { return &window[(v * nt + t - lo) * n]; };
  const auto [state, targets, diff, grid, forcing, statics, mask] = outputs(out, F);
  truth.assign(S * A * n, std::numeric_limits<float>::quiet_NaN());
  known.assign(A, 0);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t k = 0; k < 2; ++k) std::copy_n(at(s, init - 1 + k), n, state + (s * 2 + k) * n);
  std::fill_n(diff, S * n, 0.0f);  // the one-step training target: not a rollout's input
  for (std::size_t k = 0; k < A; ++k) {
    const double valid = all[init] + static_cast<double>(k + 1) * step;
    const std::size_t j = time_index(valid);
    known[k] = j < all.size() ? 1 : 0;
    if (known[k])
      for (std::size_t s = 0; s < S; ++s) std::copy_n(at(s, j), n, &truth[(s * A + k) * n]);
    for (std::size_t f = 0; f < F0; ++f) {
      if (!known[k])
        throw Error(file_ + ": forcing variable '" + forcing_[f] + "' has no time " + when(valid) + " (lead " +
                        std::to_string(k + 1) + " from " + when(all[init]) + ", the file ends at " +
                        when(all.back()) + "): " + needs,
                    ExitCode::bad_input);
      std::copy_n(at(S + f, j), n, forcing + (f * A + k) * n);
    }
    for (std::size_t d = 0; d < D; ++d)
      derived_forcing_at_points(derived_forcings_[d], valid, step, layout_.lat, layout_.lon,
                                forcing + ((F0 + d) * A + k) * n);
    // The state a day before v_k, index init + k + 1 - lag_ <= init (consecutive steps, checked above).
    for (std::size_t s = 0; s < B; ++s)
      std::copy_n(at(s, init + k + 1 - lag_), n, forcing + ((F0 + D + s) * A + k) * n);
    for (std::size_t s = 0; s < T; ++s) {
      const float *end = at(s, init + k + 1 - lag_), *start = at(s, init + k - lag_);
      float* to = forcing + ((F0 + D + B + s) * A + k) * n;
      for (std::size_t p = 0; p < n; ++p) to[p] = end[p] - start[p];
    }
    if (lead_)
      std::fill_n(forcing + ((F - 1) * A + k) * n, n,
                  static_cast<float>(static_cast<double>(k + 1) * step / 86400.0));
    // The rollout's boundary strip: `boundary`'s state at v_k (the fill at masked points without one).
    if (boundary) {
      const std::size_t b = boundary->time_index(valid);
      if (b >= boundary->layout_.times)
        throw Error(boundary->file_ + ": --boundary has no time " + when(valid) + " (lead " +
                        std::to_string(k + 1) + " from " + when(all[init]) + "): the boundary must hold the " +
                        "states at every valid time, " + span(first_valid, last_valid) + " (its times: " +
                        (boundary->times().empty() ? std::string("none")
                                                   : span(boundary->times().front(), boundary->times().back())) +
                        ")",
                    ExitCode::bad_input);
      std::vector<float> one(boundary->state_.size() + boundary->forcing_.size());
      one.resize(one.size() * n);
      boundary->reader()->read(b, 1, one.data());
      for (std::size_t s = 0; s < S; ++s) {
        float* to = targets + (s * A + k) * n;
        std::copy_n(&one[s * n], n, to);
        for (const std::size_t p : boundary->masked_) to[p] = boundary->fill_[s];
        for (std::size_t p = 0; p < n; ++p)
          if (std::isnan(to[p]))
            throw Error(strf("%s: state variable '%s' is missing (NaN) at %s, point %zu (the --boundary)",
                             boundary->file_.c_str(), state_[s].c_str(), when(valid).c_str(), p),
                        ExitCode::bad_input);
      }
    } else {
      for (std::size_t s = 0; s < S; ++s) {
        float* to = targets + (s * A + k) * n;
        std::fill_n(to, n, std::numeric_limits<float>::quiet_NaN());
        for (const std::size_t p : masked_) to[p] = fill_[s];
      }
    }
  }
  // The inputs are the file's: a missing value among them is an error, as in the samples.
  const auto check = [&](const float* x, std::size_t count, const char* field) {
    for (std::size_t i = 0; i < count; ++i)
      if (!std::isfinite(x[i]))
        throw Error(strf("%s: a missing value (NaN) in the forecast's %s input from %s (element %zu)",
                         file_.c_str(), field, when(all[init]).c_str(), i),
                    ExitCode::bad_input);
  };
  check(state, S * 2 * n, "state");
  if (forcing) check(forcing, F * A * n, "forcing");
  if (statics) std::copy(statics_.begin(), statics_.end(), statics);
  if (mask) std::copy(valid_.begin(), valid_.end(), mask);
  for (std::size_t p = 0; p < n; ++p) {  // longitude, latitude (or x, y) of each point, as fill()
    grid[p] = static_cast<float>(layout_.latlon ? layout_.lon[p] : layout_.x[p % layout_.nx]);
    grid[n + p] = static_cast<float>(layout_.latlon ? layout_.lat[p] : layout_.y[p / layout_.nx]);
  }
}

}  // namespace hpct
