// The samples of gridded sources over the time axis (see grid_samples.hpp).
#include "data/grid_samples.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/real_text.hpp"
#include "data/grid_forcings.hpp"

namespace hpct {

void GridSamples::declare_keys(deck::Schema& s) {
  s.add_string("state_variables", "",
               "netcdf: comma-separated variables (time, y, x) the model predicts (field state [S, 2, y*x]: "
               "times t-1 and t; targets [S, ar_steps, y*x]: t+1 ..; diff [S, y*x]: state(t+1) - state(t)); "
               "name@level picks one level of a variable with a level dimension (z@500)");
  s.add_string("forcing_variables", "",
               "netcdf: comma-separated variables (time, y, x) given at every predicted step (field forcing)");
  s.add_string("static_variables", "",
               "netcdf: comma-separated time-independent variables (y, x), e.g. orography, land-sea mask (field "
               "static; a variable with a time dimension gives its first time)");
  s.add_string("derived_forcings", "",
               "netcdf: forcings computed from the time and lat/lon coordinates, appended to field forcing: "
               "toa_radiation (J m-2 over the step ending at the time, as ERA5's tisr), time_of_day (sin, cos "
               "of local solar time), day_of_year (sin, cos), state_day_before (each state variable one day "
               "before the target time; ar_steps up to a day), tendency_day_before (each state variable's change "
               "over the step ending one day before the target time), lead_time (days from the initial time to "
               "the target)");
  s.add_string("derived_statics", "",
               "netcdf: static inputs computed from the lat/lon coordinates, appended to field static: lat_lon "
               "(sin, cos of latitude and of longitude)");
  s.add_int("ar_steps", 1, 1, 1000, "netcdf: predicted steps per sample (autoregressive rollout length)");
  s.add_choice("missing_data", "error", {"error", "mask"},
               "netcdf: a NaN (or _FillValue) is an error naming the variable and index (error), or (mask) points "
               "missing at every time are left out of the loss (field mask) and time steps missing at every point "
               "are skipped as initial times; any other NaN is still an error");
}

void GridSamples::declare_forecast_inputs_key(deck::Schema& s) {
  s.add_bool("forecast_inputs", false,
             "wxeval --init: the file holds the inputs of one forecast (the states at t - 1 and t, the "
             "forcings or boundary at the valid times), not a complete training sample");
}

void GridSamples::declare_steps_option_key(deck::Schema& s) {
  s.add_string("steps_option", "", "wxeval: the option that sets ar_steps, named in errors instead of ar_steps");
}

std::string GridSamples::steps_text() const {
  return (steps_option_.empty() ? "ar_steps" : steps_option_) + " " + std::to_string(ar_);
}

GridSamples::GridSamples(const std::string& file, const deck::Deck& deck)
    : file_(file),
      state_(deck::split_list(deck.get_string("state_variables"))),
      forcing_(deck::split_list(deck.get_string("forcing_variables"))),
      static_(deck::split_list(deck.get_string("static_variables"))),
      ar_(static_cast<std::size_t>(deck.get_int("ar_steps"))),
      derived_forcing_names_(deck::split_list(deck.get_string("derived_forcings"))),
      derived_static_names_(deck::split_list(deck.get_string("derived_statics"))),
      masking_(deck.get_string("missing_data") == "mask"),
      inputs_only_(deck.schema().find("forecast_inputs") != nullptr && deck.get_bool("forecast_inputs")),
      steps_option_(deck.schema().find("steps_option") != nullptr ? deck.get_string("steps_option") : "") {
  if (state_.empty())
    throw Error(file + ": the " + deck.get_string("data_format") +
                    " source needs the deck key `state_variables` (the predicted variables)",
                ExitCode::bad_input);
  const auto day_before = std::find(derived_forcing_names_.begin(), derived_forcing_names_.end(),
                                    "state_day_before");
  day_before_ = day_before != derived_forcing_names_.end();
  tendency_ = std::find(derived_forcing_names_.begin(), derived_forcing_names_.end(), "tendency_day_before") !=
              derived_forcing_names_.end();
  lead_ = std::find(derived_forcing_names_.begin(), derived_forcing_names_.end(), "lead_time") !=
          derived_forcing_names_.end();
  std::vector<std::string> computed = derived_forcing_names_;
  for (const char* sample_relative : {"state_day_before", "tendency_day_before", "lead_time"})
    computed.erase(std::remove(computed.begin(), computed.end(), sample_relative), computed.end());
  derived_forcings_ = derived_forcing_channels(computed, file + ": derived_forcings");
  derived_statics_ = derived_static_channels(derived_static_names_, file + ": derived_statics");
}

void GridSamples::finish(Layout layout) {
  layout_ = std::move(layout);
  if (layout_.latlon && layout_.lat.empty()) grid_points(layout_.y, layout_.x, layout_.lat, layout_.lon);
  const Layout& g = layout_;
  const std::size_t n = g.ny * g.nx;
  const bool derived = !derived_forcings_.empty() || !derived_statics_.empty();
  if (derived && !g.latlon &&
      (!derived_statics_.empty() || derived_forcings_.size() != 2 || derived_forcings_[0] != "sin_day_of_year"))
    throw Error(file_ +
                    ": derived_forcings/derived_statics need latitude and longitude coordinates (y named "
                    "lat/latitude or with units degrees_north, x lon/longitude or degrees_east; or 2-D "
                    "latitude and longitude over (y, x))",
                ExitCode::bad_input);
  if ((!derived_forcings_.empty() || day_before_ || tendency_ || lead_) && g.time_s.empty())
    throw Error(file_ + ": derived_forcings need a time coordinate with CF units ('hours since ...')",
                ExitCode::bad_input);
  // Without a time coordinate the times are taken as consecutive steps.
  std::vector<double> times = g.time_s;
  if (times.empty())
    for (std::size_t t = 0; t < g.times; ++t) times.push_back(static_cast<double>(t));
  const std::vector<char> bad = masking_ ? scan_missing() : std::vector<char>();
  axis_ = time_axis(times, bad, ar_ + 2, file_);
  // Note [the state a day before]: derived forcing state_day_before gives, at each target time t + k,
  // the state variables one day (lag_ steps) earlier, read from the file: known at the initial time t
  // while k <= lag_ (so ar_steps, and wxeval's lead steps, may not exceed a day). It is what 24-hour
  // persistence forecasts with, the diurnal cycle of the day before at each point; a sample then
  // needs the lag_ - 2 steps before its t - 1 too (back_), so the first day's initial times go.
  // tendency_day_before is the change over the step ending a day before the target, state(t + k -
  // lag_) - state(t + k - 1 - lag_): the day before's hourly course, one more step back.
  if (day_before_ || tendency_) {
    const char* name = day_before_ ? "state_day_before" : "tendency_day_before";
    if (axis_.step_s <= 0)  // one time: no step to count a day in
      throw Error(file_ + ": one time step; derived_forcings " + name + " needs the states of the day before",
                  ExitCode::bad_input);
    const double lag = 86400.0 / axis_.step_s;
    if (lag != std::floor(lag) || lag < 1)
      throw Error(file_ + ": derived_forcings " + name + " needs a step that divides a day (the step is " +
                      std::to_string(axis_.step_s) + " s)",
                  ExitCode::bad_input);
    lag_ = static_cast<std::size_t>(lag);
    if (ar_ > lag_)
      throw Error(file_ + ": derived_forcings " + name + ": " + steps_text() + " reaches beyond a " + "day (" +
                      std::to_string(lag_) + " steps), where the state a day before a target is not known " +
                      "at the initial time",
                  ExitCode::bad_input);
    back_ = tendency_ ? lag_ - 1 : (lag_ >= 2 ? lag_ - 2 : 0);
    axis_ = time_axis(times, bad, ar_ + 2 + back_, file_);
  }
  if (axis_.starts.empty() && !inputs_only_) {  // Note [future inputs]: read_future checks its own times
    const std::string held = file_ + ": " + std::to_string(g.times) +
                             (g.times == 1 ? " time step" : " time steps") +
                             (axis_.gaps ? " with " + std::to_string(axis_.gaps) + " gaps" : std::string());
    // One time off the grid (06:30 among hours) makes the step 30 min and every hour a gap.
    const std::string step_note = axis_.gaps && !g.time_s.empty()
                                      ? " (the step is the smallest difference between successive times, " +
                                            real_text(axis_.step_s) + " s, from " +
                                            iso_time(times[axis_.step_at - 1]) + " to " +
                                            iso_time(times[axis_.step_at]) + " at indices " +
                                            std::to_string(axis_.step_at - 1) + " and " +
                                            std::to_string(axis_.step_at) + ": a time off the grid?)"
                                      : std::string();
    if (steps_option_.empty())
      throw Error(held + "; a sample needs ar_steps + 2 = " + std::to_string(ar_ + 2) +
                      (axis_.gaps ? " consecutive steps" : "") + step_note,
                  ExitCode::bad_input);
    // wxeval: the times one initial time needs, and the most its option may ask of this file; when
    // not even one lead fits, lowering the option cannot help, so the message asks only for times.
    const std::size_t need = ar_ + 2 + back_, fits = g.times > back_ + 2 ? g.times - back_ - 2 : 0;
    const std::string option = steps_option_.substr(steps_option_.rfind(' ') + 1);
    std::string remedy = (ar_ > 1 ? "; even " + option + " 1 needs " + std::to_string(back_ + 3) +
                                        (axis_.gaps ? " consecutive" : "") + " times"
                                  : std::string()) +
                         ": give a file with more times";
    if (fits > 0)
      remedy = (axis_.gaps ? std::string() : ": at most " + std::to_string(fits) + " fit here") + "; lower " +
               option + " or give a file with more times";
    throw Error(held + "; " + steps_text() + " needs " + std::to_string(need) + (axis_.gaps ? " consecutive" : "") +
                    " times from an initial time t (t - 1, t, " +
                    (ar_ == 1 ? "the lead" : "the " + std::to_string(ar_) + " leads") +
                    (back_ ? " and the " + std::to_string(back_) + " steps before t - 1 that " +
                                 (day_before_ ? "state_day_before" : "tendency_day_before") + " reads"
                           : std::string()) +
                    ")" + remedy,
                ExitCode::bad_input);
  }
  statics_ = g.statics;
  statics_.resize((static_.size() + derived_statics_.size()) * n);
  for (std::size_t k = 0; k < derived_statics_.size(); ++k)
    derived_static_at_points(derived_statics_[k], g.lat, g.lon, &statics_[(static_.size() + k) * n]);
  const auto spec = [](const char* name, std::initializer_list<std::int64_t> dims) {
    FieldSpec s;
    s.name = name;
    s.row_shape = Shape(dims);
    return s;
  };
  const auto S = static_cast<std::int64_t>(state_.size()), N = static_cast<std::int64_t>(n),
             A = static_cast<std::int64_t>(ar_);
  const auto F = static_cast<std::int64_t>(forcing_.size() + derived_forcings_.size() +
                                           (day_before_ ? state_.size() : 0) + (tendency_ ? state_.size() : 0) +
                                           (lead_ ? 1 : 0));
  const auto K = static_cast<std::int64_t>(static_.size() + derived_statics_.size());
  specs_.push_back(spec("state", {S, 2, N}));
  specs_.push_back(spec("targets", {S, A, N}));
  specs_.push_back(spec("diff", {S, N}));
  specs_.push_back(spec("grid", {2, static_cast<std::int64_t>(g.ny), static_cast<std::int64_t>(g.nx)}));
  if (F) specs_.push_back(spec("forcing", {F, A, N}));
  if (K) specs_.push_back(spec("static", {K, N}));
  if (masking_) specs_.push_back(spec("mask", {N}));
}

// Note [missing data]: with missing_data mask, one pass over the file finds the points missing (NaN)
// at every time in some timed variable or in a static one: they are masked (field mask 0, left out
// of the loss and the scores) and given the variable's mean so the inputs stay finite; and the time
// steps where a variable is missing at every point: no sample uses them. What is left, a NaN at one
// point and time, is still an error naming the variable and the index (a broken file, not a domain).
std::vector<char> GridSamples::scan_missing() {
  const Layout& g = layout_;
  const std::size_t n = g.ny * g.nx, V = state_.size() + forcing_.size(), chunk = 64;
  std::vector<std::size_t> nan_count(V * n, 0);
  std::vector<double> sum(V, 0.0), count(V, 0.0);
  std::vector<char> bad(g.times, 0);
  std::vector<float> window;
  const std::unique_ptr<Reader> in = reader();
  for (std::size_t t0 = 0; t0 < g.times; t0 += chunk) {
    const std::size_t nt = std::min(chunk, g.times - t0);
    window.resize(V * nt * n);
    in->read(t0, nt, window.data());
    for (std::size_t v = 0; v < V; ++v)
      for (std::size_t k = 0; k < nt; ++k) {
        const float* x = &window[(v * nt + k) * n];
        std::size_t nans = 0;
        for (std::size_t p = 0; p < n; ++p) {
          if (std::isnan(x[p])) ++nans, ++nan_count[v * n + p];
          else sum[v] += x[p], count[v] += 1;
        }
        if (nans == n) bad[t0 + k] = 1;
      }
  }
  valid_.assign(n, 1.0f);
  for (std::size_t v = 0; v < V; ++v)
    for (std::size_t p = 0; p < n; ++p)
      if (nan_count[v * n + p] == g.times) valid_[p] = 0.0f;
  for (std::size_t k = 0; k < static_.size(); ++k)
    for (std::size_t p = 0; p < n; ++p)
      if (std::isnan(layout_.statics[k * n + p])) valid_[p] = 0.0f;
  for (std::size_t p = 0; p < n; ++p)
    if (valid_[p] == 0.0f) masked_.push_back(p);
  if (masked_.size() == n) throw Error(file_ + ": every point is missing at every time", ExitCode::bad_input);
  for (std::size_t v = 0; v < V; ++v) fill_.push_back(count[v] > 0 ? static_cast<float>(sum[v] / count[v]) : 0.0f);
  for (std::size_t k = 0; k < static_.size(); ++k) {  // statics: the mean of the kept points
    double s = 0, c = 0;
    for (std::size_t p = 0; p < n; ++p)
      if (valid_[p] != 0.0f) s += layout_.statics[k * n + p], c += 1;
    for (const std::size_t p : masked_) layout_.statics[k * n + p] = static_cast<float>(s / c);
  }
  for (const char b : bad) missing_times_ += b ? 1 : 0;
  return bad;
}

std::string GridSamples::description() const {
  std::string d = file_ + " (" + std::to_string(layout_.times) + " times x " + std::to_string(layout_.ny) + " x " +
                  std::to_string(layout_.nx);
  if (!layout_.time_s.empty()) {
    const double h = axis_.step_s / 3600.0;
    d += ", step " + (h == static_cast<long long>(h) ? std::to_string(static_cast<long long>(h)) + " h"
                                                     : std::to_string(axis_.step_s) + " s");
  }
  if (axis_.gaps)
    d += ", " + std::to_string(axis_.gaps) + " gaps in time (" + std::to_string(axis_.missing_steps) +
         " steps missing)";
  if (masking_)
    d += ", " + std::to_string(masked_.size()) + " points always missing (masked), " +
         std::to_string(missing_times_) + " time steps missing";
  const std::size_t all = layout_.times >= ar_ + 2 ? layout_.times - ar_ - 1 : 0;  // skipped: also a day
  if (axis_.starts.size() < all) d += ", " + std::to_string(all - axis_.starts.size()) + " initial times skipped";
  return d + ")";
}

GridSamples::Outputs GridSamples::outputs(const std::vector<FieldBuffer>& out, std::size_t forcings) const {
  const auto at = [&](std::size_t i) { return static_cast<float*>(out[i].values); };
  std::size_t next = 4;
  float* forcing = forcings ? at(next++) : nullptr;
  float* statics = statics_.empty() ? nullptr : at(next++);
  return {at(0), at(1), at(2), at(3), forcing, statics, masking_ ? at(next) : nullptr};
}

long long GridSamples::read_rows(const std::vector<std::uint64_t>& rows,
                                 const std::vector<FieldBuffer>& out) const {
  // Runs of samples at consecutive times share their time slices: one read of the run's times per
  // run, so a rank reads only the times of its own samples.
  if (rows.empty()) return kNoBadValue;
  const std::unique_ptr<Reader> in = reader();
  std::vector<float> window;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i + 1;
    while (j < rows.size() && first_time(rows[j]) == first_time(rows[j - 1]) + 1) ++j;
    fill(*in, first_time(rows[i]), j - i, out, i, window);
    i = j;
  }
  return kNoBadValue;
}

long long GridSamples::read_block(std::uint64_t first, std::uint64_t count,
                                  const std::vector<FieldBuffer>& out) const {
  std::vector<std::uint64_t> rows(count);
  for (std::uint64_t r = 0; r < count; ++r) rows[r] = first + r;
  return read_rows(rows, out);
}

// Samples at first times [t0, t0 + count) into rows [at, at + count) of the buffers (specs_ order).
void GridSamples::fill(Reader& in, std::size_t t0, std::uint64_t count, const std::vector<FieldBuffer>& out,
                       std::size_t at, std::vector<float>& window) const {
  const std::size_t n = layout_.ny * layout_.nx, S = state_.size(), F0 = forcing_.size(), A = ar_;
  const std::size_t D = derived_forcings_.size(), B = day_before_ ? S : 0, T = tendency_ ? S : 0;
  const std::size_t F = F0 + D + B + T + (lead_ ? 1 : 0);
  const std::size_t nt = count + 1 + A + back_;  // times t0 - back_ .. t0 + count + ar_
  const std::size_t first = t0 - back_;
  window.resize((S + F0 + D) * nt * n);
  in.read(first, nt, window.data());
  for (std::size_t v = 0; v < (masked_.empty() ? 0 : S + F0); ++v)  // Note [missing data]
    for (std::size_t k = 0; k < nt; ++k)
      for (const std::size_t p : masked_) window[(v * nt + k) * n + p] = fill_[v];
  for (std::size_t d = 0; d < D; ++d)
    for (std::size_t k = back_ + 2; k < nt; ++k)  // forcings are used from the first target time on
      derived_forcing_at_points(derived_forcings_[d], layout_.time_s[first + k], axis_.step_s, layout_.lat,
                                layout_.lon, &window[((S + F0 + d) * nt + k) * n]);
  // window[v][time - t0 + back_][point]; sample r (initial time t0 + r + 1) takes times r .. r + A + 1.
  const auto at_time = [&](std::size_t v, std::size_t t) { return &window[(v * nt + t + back_) * n]; };
  // Forcing channel f < F0 + D + B at target k of sample r: read or computed, or the state a day before.
  const auto forcing_at = [&](std::size_t f, std::size_t r, std::size_t k) {
    return f < F0 + D ? at_time(S + f, r + 2 + k) : at_time(f - F0 - D, r + 2 + k - lag_);
  };
  const auto [state, targets, diff, grid, forcing, statics, mask] = outputs(out, F);
  for (std::size_t r = 0; r < count; ++r) {
    const std::size_t row = at + r;
    for (std::size_t s = 0; s < S; ++s) {
      for (std::size_t k = 0; k < 2; ++k) std::copy_n(at_time(s, r + k), n, state + ((row * S + s) * 2 + k) * n);
      for (std::size_t k = 0; k < A; ++k)
        std::copy_n(at_time(s, r + 2 + k), n, targets + ((row * S + s) * A + k) * n);
      const float* now = at_time(s, r + 1);
      const float* next_state = at_time(s, r + 2);
      for (std::size_t p = 0; p < n; ++p) diff[(row * S + s) * n + p] = next_state[p] - now[p];
    }
    for (std::size_t f = 0; f < F0 + D + B; ++f)
      for (std::size_t k = 0; k < A; ++k)
        std::copy_n(forcing_at(f, r, k), n, forcing + ((row * F + f) * A + k) * n);
    for (std::size_t s = 0; s < T; ++s)  // tendency_day_before (Note [the state a day before])
      for (std::size_t k = 0; k < A; ++k) {
        const float* end = at_time(s, r + 2 + k - lag_);
        const float* start = at_time(s, r + 1 + k - lag_);
        float* to = forcing + ((row * F + F0 + D + B + s) * A + k) * n;
        for (std::size_t p = 0; p < n; ++p) to[p] = end[p] - start[p];
      }
    // Note [lead time]: lead_time is the time from the initial time t to target k, in days, at
    // every point: (k + 1) steps. A rolled-out model can then weigh what it carries from the initial
    // state against the slower signals (the state a day before, the diurnal cycle) by how far
    // ahead it is, which the states alone do not tell it.
    if (lead_)
      for (std::size_t k = 0; k < A; ++k)
        std::fill_n(forcing + ((row * F + F - 1) * A + k) * n, n,
                    static_cast<float>(static_cast<double>(k + 1) * axis_.step_s / 86400.0));
    if (statics) std::copy(statics_.begin(), statics_.end(), statics + row * statics_.size());
    if (mask) std::copy(valid_.begin(), valid_.end(), mask + row * n);
    for (std::size_t p = 0; p < n; ++p) {  // longitude, latitude (or x, y) of each point
      grid[row * 2 * n + p] = static_cast<float>(layout_.latlon ? layout_.lon[p] : layout_.x[p % layout_.nx]);
      grid[row * 2 * n + n + p] = static_cast<float>(layout_.latlon ? layout_.lat[p] : layout_.y[p / layout_.nx]);
    }
  }
}

}  // namespace hpct
