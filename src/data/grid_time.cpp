// Time coordinates of gridded files (see grid_time.hpp).
#include "data/grid_time.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace hpct {

// Dates count in 400-year eras of 146097 days from 0000-03-01 (a leap day then ends each year).
long long days_from_civil(long long year, int month, int day) {
  const long long y = month <= 2 ? year - 1 : year;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CivilDate civil_from_days(long long days) {
  const long long z = days + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const long long doe = z - era * 146097;
  const long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long long mp = (5 * doy + 2) / 153;
  CivilDate d;
  d.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  d.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  d.year = yoe + era * 400 + (d.month <= 2 ? 1 : 0);
  return d;
}

TimeUnits parse_time_units(const std::string& units, const std::string& what) {
  const auto fail = [&]() -> TimeUnits {
    throw Error(what + ": time units '" + units +
                    "' are not 'UNIT since yyyy-mm-dd[ hh:mm:ss]' (UNIT days, hours, minutes or seconds)",
                ExitCode::bad_input);
  };
  const std::size_t since = units.find(" since ");
  if (since == std::string::npos) return fail();
  std::string unit = units.substr(0, since);
  unit.erase(0, unit.find_first_not_of(' '));
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  TimeUnits t;
  for (const auto& [names, seconds] :
       std::vector<std::pair<std::vector<const char*>, double>>{{{"days", "day", "d"}, 86400.0},
                                                                {{"hours", "hour", "hrs", "hr", "h"}, 3600.0},
                                                                {{"minutes", "minute", "min", "mins"}, 60.0},
                                                                {{"seconds", "second", "sec", "secs", "s"}, 1.0},
                                                                {{"milliseconds", "millisecond", "ms"}, 1e-3}})
    for (const char* n : names)
      if (unit == n) t.seconds_per_unit = seconds;
  if (t.seconds_per_unit == 0) return fail();
  // yyyy-mm-dd, then optionally [ T]hh[:mm[:ss[.f]]], then optionally Z, UTC or +-hh[:mm].
  const std::string ref = units.substr(since + 7);
  const char* p = ref.c_str();
  char* end = nullptr;
  const long long year = std::strtoll(p, &end, 10);
  if (end == p || *end != '-') return fail();
  const long month = std::strtol(end + 1, &end, 10);
  if (*end != '-') return fail();
  const long day = std::strtol(end + 1, &end, 10);
  if (month < 1 || month > 12 || day < 1 || day > 31) return fail();
  double seconds = 0;
  p = end;
  while (*p == ' ' || *p == 'T') ++p;
  if (std::isdigit(static_cast<unsigned char>(*p))) {
    const long h = std::strtol(p, &end, 10);
    long m = 0;
    double s = 0;
    if (*end == ':') m = std::strtol(end + 1, &end, 10);
    if (*end == ':') s = std::strtod(end + 1, &end);
    seconds = h * 3600.0 + m * 60.0 + s;
    p = end;
  }
  while (*p == ' ') ++p;
  if (*p == '+' || *p == '-') {  // the reference is local time at that offset from UTC
    const int sign = *p == '-' ? -1 : 1;
    const long hh = std::strtol(p + 1, &end, 10);
    long mm = 0;
    if (end - (p + 1) == 4) mm = hh % 100;  // +hhmm
    else if (*end == ':') mm = std::strtol(end + 1, &end, 10);
    const long hours = end - (p + 1) == 4 ? hh / 100 : hh;
    seconds -= sign * (hours * 3600.0 + mm * 60.0);
    p = end;
  } else if (*p == 'Z') {
    ++p;
  } else if (std::string(p).rfind("UTC", 0) == 0) {
    p += 3;
  }
  while (*p == ' ') ++p;
  if (*p != '\0') return fail();
  t.epoch_seconds = static_cast<double>(days_from_civil(year, static_cast<int>(month), static_cast<int>(day))) *
                        86400.0 +
                    seconds;
  return t;
}

TimeAxis time_axis(const std::vector<double>& times, const std::vector<char>& bad, std::size_t window,
                   const std::string& what) {
  TimeAxis a;
  const std::size_t T = times.size();
  for (std::size_t i = 1; i < T; ++i) {
    const double d = times[i] - times[i - 1];
    if (!(d > 0))
      throw Error(what + ": the time coordinate does not increase at index " + std::to_string(i),
                  ExitCode::bad_input);
    if (a.step_s == 0 || d < a.step_s) a.step_s = d, a.step_at = i;
  }
  // Steps between times i - 1 and i: 1 where they follow each other, 0 at a gap.
  std::vector<char> follows(T, 0);
  for (std::size_t i = 1; i < T; ++i) {
    const double k = (times[i] - times[i - 1]) / a.step_s;
    const double whole = std::round(k);
    if (std::fabs(k - whole) > 1e-6) {
      char text[160];
      std::snprintf(text, sizeof text, " (%g s) is not a multiple of the step (%g s)", times[i] - times[i - 1],
                    a.step_s);
      throw Error(what + ": irregular time coordinate: the difference between indices " + std::to_string(i - 1) +
                      " and " + std::to_string(i) + text,
                  ExitCode::bad_input);
    }
    follows[i] = whole == 1 ? 1 : 0;
    if (whole > 1) ++a.gaps, a.missing_steps += static_cast<std::size_t>(whole) - 1;
  }
  const auto usable = [&](std::size_t i) { return bad.empty() || !bad[i]; };
  // run = how many consecutive usable times end at i.
  std::size_t run = 0;
  for (std::size_t i = 0; i < T; ++i) {
    run = !usable(i) ? 0 : (i > 0 && follows[i] && run > 0 ? run + 1 : 1);
    if (run >= window) a.starts.push_back(i + 1 - window);
  }
  return a;
}

std::string iso_time(double seconds) {
  const double days = std::floor(seconds / 86400);
  const CivilDate d = civil_from_days(static_cast<long long>(days));
  const auto s = static_cast<long long>(std::llround(seconds - days * 86400));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02lld:%02lld", d.year, d.month, d.day, s / 3600, s / 60 % 60);
  return buf;
}

double parse_iso_time(const std::string& text, const std::string& what) {
  // The reference time of CF units is the same text: parse it there (one parser of dates).
  try {
    return parse_time_units("seconds since " + text, what).epoch_seconds;
  } catch (const Error&) {
    throw Error(what + ": '" + text + "' is not a time yyyy-mm-dd[Thh[:mm[:ss]]]", ExitCode::bad_input);
  }
}

}  // namespace hpct
