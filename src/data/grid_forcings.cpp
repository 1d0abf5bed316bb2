// Derived forcings and statics of gridded sources (see grid_forcings.hpp).
#include "data/grid_forcings.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "data/grid_time.hpp"

namespace hpct {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDegree = kPi / 180.0;
constexpr double kDay = 86400.0;

// The integral from 0 to w of max(0, a + b cos(v)) dv (b >= 0), continuous in w: each whole
// period adds the daylight part 2 (a ws + b sin ws), ws the half-day's hour angle (sunset).
double clipped_cosine_integral(double a, double b, double w) {
  double ws;  // cos(v) > -a / b for |v| < ws
  if (b < 1e-12) ws = a > 0 ? kPi : 0.0;
  else ws = std::acos(std::clamp(-a / b, -1.0, 1.0));
  const double period = 2.0 * (a * ws + b * std::sin(ws));
  const double k = std::floor((w + kPi) / (2.0 * kPi));
  const double c = std::clamp(w - 2.0 * kPi * k, -ws, ws);  // the part of this period's daylight before w
  return k * period + a * c + b * std::sin(c);
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& forcing_table() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> t = {
      {"toa_radiation", {"toa_radiation"}},
      {"time_of_day", {"sin_time_of_day", "cos_time_of_day"}},
      {"day_of_year", {"sin_day_of_year", "cos_day_of_year"}}};
  return t;
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& static_table() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> t = {
      {"lat_lon", {"sin_lat", "cos_lat", "sin_lon", "cos_lon"}}};
  return t;
}

std::vector<std::string> expand(const std::vector<std::pair<std::string, std::vector<std::string>>>& table,
                                const std::vector<std::string>& names, const std::string& key,
                                const std::string& also_known = "") {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    const auto it = std::find_if(table.begin(), table.end(), [&](const auto& e) { return e.first == n; });
    if (it == table.end()) {
      std::string known;
      for (const auto& e : table) known += (known.empty() ? "" : ", ") + e.first;
      known += also_known;
      throw Error(key + ": unknown derived input '" + n + "' (known: " + known + ")", ExitCode::bad_input);
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

}  // namespace

double year_fraction(double unix_seconds) {
  const double days = std::floor(unix_seconds / kDay);
  const CivilDate d = civil_from_days(static_cast<long long>(days));
  const long long jan1 = days_from_civil(d.year, 1, 1);
  const bool leap = (d.year % 4 == 0 && d.year % 100 != 0) || d.year % 400 == 0;
  return (unix_seconds / kDay - static_cast<double>(jan1)) / (leap ? 366.0 : 365.0);
}

SolarGeometry solar_geometry(double unix_seconds) {
  // Spencer (1971), "Fourier series representation of the position of the sun", Search 2(5):172;
  // the day angle g = 2 pi (day of the year - 1) / 365, here with the day's fraction.
  const double g = 2.0 * kPi * year_fraction(unix_seconds);
  const double c1 = std::cos(g), s1 = std::sin(g), c2 = std::cos(2 * g), s2 = std::sin(2 * g);
  SolarGeometry s;
  s.eccentricity = 1.000110 + 0.034221 * c1 + 0.001280 * s1 + 0.000719 * c2 + 0.000077 * s2;
  s.declination = 0.006918 - 0.399912 * c1 + 0.070257 * s1 - 0.006758 * c2 + 0.000907 * s2 -
                  0.002697 * std::cos(3 * g) + 0.00148 * std::sin(3 * g);
  s.equation_of_time_h = (0.000075 + 0.001868 * c1 - 0.032077 * s1 - 0.014615 * c2 - 0.040849 * s2) * 229.18 / 60.0;
  return s;
}

double toa_incident_solar(double lat_deg, double lon_deg, double unix_seconds, double step_s) {
  const SolarGeometry s = solar_geometry(unix_seconds - 0.5 * step_s);
  const double lat = lat_deg * kDegree;
  const double a = std::sin(lat) * std::sin(s.declination), b = std::cos(lat) * std::cos(s.declination);
  // Hour angle at a time: 2 pi (local solar time / 24 h) - pi.
  const auto hour_angle = [&](double t) {
    const double solar_hours = std::fmod(t, kDay) / 3600.0 + lon_deg / 15.0 + s.equation_of_time_h;
    return 2.0 * kPi * solar_hours / 24.0 - kPi;
  };
  // fmod per end would break the interval at midnight UTC: take the end from the start.
  const double w0 = hour_angle(unix_seconds - step_s), w1 = w0 + 2.0 * kPi * step_s / kDay;
  const double per_radian = kDay / (2.0 * kPi);  // seconds per radian of hour angle
  return kSolarConstant * s.eccentricity * per_radian *
         (clipped_cosine_integral(a, b, w1) - clipped_cosine_integral(a, b, w0));
}

std::vector<std::string> derived_forcing_channels(const std::vector<std::string>& names, const std::string& key) {
  // The sample-relative forcings the grid sources fill themselves (grid_samples.cpp) are known too.
  return expand(forcing_table(), names, key, ", state_day_before, tendency_day_before, lead_time");
}

std::vector<std::string> derived_static_channels(const std::vector<std::string>& names, const std::string& key) {
  return expand(static_table(), names, key);
}

void derived_forcing_at_points(const std::string& channel, double unix_seconds, double step_s,
                               const std::vector<double>& lat, const std::vector<double>& lon, float* out) {
  const std::size_t n = lat.size();
  if (channel == "toa_radiation") {
    for (std::size_t p = 0; p < n; ++p)
      out[p] = static_cast<float>(toa_incident_solar(lat[p], lon[p], unix_seconds, step_s));
    return;
  }
  if (channel == "sin_time_of_day" || channel == "cos_time_of_day") {
    // Local mean solar time: UTC + longitude / 15 hours.
    const bool sine = channel[0] == 's';
    for (std::size_t p = 0; p < n; ++p) {
      const double phase = 2.0 * kPi * (std::fmod(unix_seconds, kDay) / kDay + lon[p] / 360.0);
      out[p] = static_cast<float>(sine ? std::sin(phase) : std::cos(phase));
    }
    return;
  }
  if (channel == "sin_day_of_year" || channel == "cos_day_of_year") {
    const double phase = 2.0 * kPi * year_fraction(unix_seconds);
    std::fill_n(out, n, static_cast<float>(channel[0] == 's' ? std::sin(phase) : std::cos(phase)));
    return;
  }
  throw Error("internal: no derived forcing '" + channel + "'");
}

void derived_static_at_points(const std::string& channel, const std::vector<double>& lat,
                              const std::vector<double>& lon, float* out) {
  const bool sine = channel[0] == 's';
  const bool of_lat = channel.size() > 3 && channel.compare(channel.size() - 3, 3, "lat") == 0;
  if (channel != "sin_lat" && channel != "cos_lat" && channel != "sin_lon" && channel != "cos_lon")
    throw Error("internal: no derived static field '" + channel + "'");
  for (std::size_t p = 0; p < lat.size(); ++p) {
    const double angle = (of_lat ? lat[p] : lon[p]) * kDegree;
    out[p] = static_cast<float>(sine ? std::sin(angle) : std::cos(angle));
  }
}

void grid_points(const std::vector<double>& lat, const std::vector<double>& lon, std::vector<double>& point_lat,
                 std::vector<double>& point_lon) {
  point_lat.clear(), point_lon.clear();
  for (const double y : lat)
    for (const double x : lon) point_lat.push_back(y), point_lon.push_back(x);
}

void derived_forcing(const std::string& channel, double unix_seconds, double step_s, const std::vector<double>& lat,
                     const std::vector<double>& lon, float* out) {
  std::vector<double> plat, plon;
  grid_points(lat, lon, plat, plon);
  derived_forcing_at_points(channel, unix_seconds, step_s, plat, plon, out);
}

void derived_static(const std::string& channel, const std::vector<double>& lat, const std::vector<double>& lon,
                    float* out) {
  std::vector<double> plat, plon;
  grid_points(lat, lon, plat, plon);
  derived_static_at_points(channel, plat, plon, out);
}

}  // namespace hpct
