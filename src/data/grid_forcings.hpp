// Forcings and static inputs a gridded source derives from the file's time and latitude/longitude
// coordinates instead of reading them (deck keys derived_forcings, derived_statics; docs/gnn.md):
// top-of-atmosphere incident solar radiation integrated over the time step (as ERA5's `tisr`),
// sin/cos of local solar time and of the day of the year, sin/cos of latitude and longitude.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hpct {

// The solar constant (W m-2) of Kopp and Lean (2011).
constexpr double kSolarConstant = 1361.0;

// Sun-earth geometry at a time (seconds since 1970-01-01 UTC), Spencer's (1971) Fourier series in
// the day of the year: declination (radians), equation of time (hours) and the eccentricity factor
// (mean sun-earth distance / distance)^2.
struct SolarGeometry {
  double declination = 0, equation_of_time_h = 0, eccentricity = 1;
};
SolarGeometry solar_geometry(double unix_seconds);

// Note [toa radiation over the step]: incident solar radiation at the top of the atmosphere
// (J m-2) at latitude/longitude (degrees) over the `step_s` seconds ending at `unix_seconds`, the
// accumulation ERA5 stores as `tisr` at that valid time:
//   S0 E0 integral over the step of max(0, sin(lat) sin(d) + cos(lat) cos(d) cos(w)) dt,
// w the hour angle (2 pi per day, 0 at local solar noon; local solar time = UTC + lon / 15 h + the
// equation of time). The geometry (d, E0, equation of time) is taken at the step's middle; the
// integral over w is exact (the clipped cosine integrates in closed form between sunrise and
// sunset), so a 6-hour step is as exact as a 1-hour one.
double toa_incident_solar(double lat_deg, double lon_deg, double unix_seconds, double step_s);

// The calendar behind the day-of-year forcing: (day of the year - 1 + hour / 24) / days in that year.
double year_fraction(double unix_seconds);

// The derived channels of the deck's lists: derived_forcings (toa_radiation -> toa_radiation;
// time_of_day -> sin_time_of_day, cos_time_of_day; day_of_year -> sin_day_of_year,
// cos_day_of_year) and derived_statics (lat_lon -> sin_lat, cos_lat, sin_lon, cos_lon). An unknown
// name throws naming `key` and the names it knows.
std::vector<std::string> derived_forcing_channels(const std::vector<std::string>& names, const std::string& key);
std::vector<std::string> derived_static_channels(const std::vector<std::string>& names, const std::string& key);

// Channel `channel` (one of derived_forcing_channels') at time `unix_seconds` (the end of a step of
// `step_s` seconds) at every point p with latitude lat[p] and longitude lon[p] (degrees; any grid,
// a projected one included).
void derived_forcing_at_points(const std::string& channel, double unix_seconds, double step_s,
                               const std::vector<double>& lat, const std::vector<double>& lon, float* out);
// Static channel `channel` at every point, as above.
void derived_static_at_points(const std::string& channel, const std::vector<double>& lat,
                              const std::vector<double>& lon, float* out);
// The same on a regular grid: point p = j nx + i has latitude lat[j] and longitude lon[i].
void derived_forcing(const std::string& channel, double unix_seconds, double step_s, const std::vector<double>& lat,
                     const std::vector<double>& lon, float* out);
void derived_static(const std::string& channel, const std::vector<double>& lat, const std::vector<double>& lon,
                    float* out);
// Each point's latitude and longitude of a regular grid (rows lat, columns lon), p = j nx + i.
void grid_points(const std::vector<double>& lat, const std::vector<double>& lon, std::vector<double>& point_lat,
                 std::vector<double>& point_lon);

}  // namespace hpct
