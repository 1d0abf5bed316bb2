// The time axis of a gridded file: CF time units ("hours since 1900-01-01 00:00:00") decoded to
// seconds since 1970-01-01 UTC, the time step read from the coordinate and the gaps in it, and the
// initial times whose samples see only whole steps (docs/weather-data.md, "What is read").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hpct {

struct CivilDate {
  long long year = 1970;
  int month = 1, day = 1;
};
// Proleptic Gregorian calendar: days since 1970-01-01 to and from a date.
long long days_from_civil(long long year, int month, int day);
CivilDate civil_from_days(long long days);

// "UNIT since DATE[ TIME][ZONE]" (UNIT days, hours, minutes, seconds, milliseconds, or the
// singular/abbreviated forms xarray and CDS write; DATE yyyy-mm-dd; TIME hh[:mm[:ss[.f]]]; zone Z
// or +hh:mm) as (seconds per unit, the reference time in seconds since 1970). `what` names the
// variable for the error.
struct TimeUnits {
  double seconds_per_unit = 0, epoch_seconds = 0;
};
TimeUnits parse_time_units(const std::string& units, const std::string& what);

// A time as "yyyy-mm-ddThh:mm" (seconds since 1970 UTC), for messages; and such a text (date, then
// optionally [ T]hh[:mm[:ss]]) as seconds, an error naming `what` otherwise.
std::string iso_time(double seconds);
double parse_iso_time(const std::string& text, const std::string& what);

// Note [time gaps]: the step is the smallest difference between successive times; every other
// difference must be a whole multiple of it (a gap of missing steps), else the coordinate is
// irregular (an error naming the index). A sample at initial time t needs times t - 1 .. t + A to
// be consecutive steps; `starts` lists the first time index (t - 1) of every such sample.
struct TimeAxis {
  double step_s = 0;                // seconds: the smallest difference between successive times
  std::size_t step_at = 0;          // the first index i whose difference from i - 1 is step_s
  std::vector<std::size_t> starts;  // sample -> its first time index
  std::size_t gaps = 0;             // places where steps are missing
  std::size_t missing_steps = 0;    // steps missing over all gaps
};
// `times` in seconds (ascending); `bad` (empty or one flag per time): a time step whose values are
// missing, which no sample may use. `window` = ar_steps + 2 times per sample.
TimeAxis time_axis(const std::vector<double>& times, const std::vector<char>& bad, std::size_t window,
                   const std::string& what);

}  // namespace hpct
