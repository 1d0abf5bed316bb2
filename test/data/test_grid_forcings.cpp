// Derived forcings (data/grid_forcings.hpp) against reference values computed here from textbook
// closed forms and almanac figures, not from the code under test: the daily insolation at the top of
// the atmosphere, Q = (S0 E0 / pi) (h0 sin(lat) sin(d) + cos(lat) cos(d) sin(h0)) per second of the
// day with cos(h0) = -tan(lat) tan(d) (e.g. Hartmann, Global Physical Climatology, eq. 2.15), at the
// 2024 June solstice (declination 23.44 degrees, sun-earth distance 1.01633 au: E0 = 0.96813) and
// March equinox (0 degrees, 0.99601 au: E0 = 1.00802); and the time axis (data/grid_time.hpp).
#include <gtest/gtest.h>

#include <cmath>

#include "data/grid_forcings.hpp"
#include "data/grid_time.hpp"
#include "support/test_support.hpp"

using namespace hpct;

namespace {

constexpr double kPi = 3.14159265358979323846, kDeg = kPi / 180.0;
const double kJune21 = static_cast<double>(days_from_civil(2024, 6, 21)) * 86400.0;  // 00 UTC
const double kMarch20 = static_cast<double>(days_from_civil(2024, 3, 20)) * 86400.0;

// Textbook daily-mean insolation (W m-2) for a fixed declination and distance.
double daily_mean(double lat_deg, double decl_deg, double e0) {
  const double phi = lat_deg * kDeg, d = decl_deg * kDeg;
  const double h0 = std::acos(std::max(-1.0, std::min(1.0, -std::tan(phi) * std::tan(d))));
  return 1361.0 * e0 / kPi * (h0 * std::sin(phi) * std::sin(d) + std::cos(phi) * std::cos(d) * std::sin(h0));
}

// The 24 hourly values of the day centred on `noon` (seconds), summed, as a mean in W m-2.
double summed_day(double lat, double lon, double noon) {
  double total = 0;
  for (int h = 1; h <= 24; ++h) total += toa_incident_solar(lat, lon, noon - 12 * 3600.0 + h * 3600.0, 3600.0);
  return total / 86400.0;
}

TEST(GridForcings, DailyInsolationMatchesTheClosedFormAtTheSolsticeAndEquinox) {
  for (const double lat : {0.0, 30.0, 45.0, 55.0, 70.0, 90.0, -30.0, -60.0}) {
    const double ref = daily_mean(lat, 23.44, 0.96813);
    EXPECT_NEAR(summed_day(lat, 0.0, kJune21), ref, 0.004 * 1361.0) << "June, latitude " << lat;
  }
  // The pole in summer: S0 E0 sin(d), about 524 W m-2; in winter nothing.
  EXPECT_NEAR(summed_day(90.0, 0.0, kJune21), 1361.0 * 0.96813 * std::sin(23.44 * kDeg), 2.0);
  EXPECT_EQ(summed_day(-90.0, 0.0, kJune21), 0.0);
  for (const double lat : {0.0, 45.0, -45.0})
    EXPECT_NEAR(summed_day(lat, 100.0, kMarch20 + 12 * 3600.0), daily_mean(lat, 0.0, 1.00802), 0.004 * 1361.0)
        << "March, latitude " << lat;
  EXPECT_NEAR(summed_day(0.0, 0.0, kMarch20 + 12 * 3600.0), 1361.0 * 1.00802 / kPi, 2.0);
}

TEST(GridForcings, HourlyValuesFollowTheSun) {
  // The equator at the equinox, the hour around local solar noon (equation of time -7.5 min on
  // 20 March): S0 E0 * 3600 s * sinc(pi / 24), the mean of cos(w) over |w| < 7.5 degrees; nothing at
  // night. Longitude 90 E: noon at 06:07:30 UTC.
  const double noon = kMarch20 + 6 * 3600.0 + 7.5 * 60.0;
  const double hour = toa_incident_solar(0.0, 90.0, noon + 1800.0, 3600.0);
  EXPECT_NEAR(hour, 1361.0 * 1.00802 * 3600.0 * std::sin(kPi / 24) / (kPi / 24), 0.002 * 1361.0 * 3600.0);
  EXPECT_EQ(toa_incident_solar(0.0, 90.0, noon + 12 * 3600.0, 3600.0), 0.0);
  // A 6-hour step is the sum of its hours (the integral is exact; the geometry moves a little).
  const double end = kJune21 + 15 * 3600.0;
  double hours = 0;
  for (int h = 0; h < 6; ++h) hours += toa_incident_solar(52.0, -1.0, end - h * 3600.0, 3600.0);
  EXPECT_NEAR(toa_incident_solar(52.0, -1.0, end, 6 * 3600.0), hours, 1e-4 * hours);
  // 0-360 and -180-180 longitudes are the same place.
  EXPECT_DOUBLE_EQ(toa_incident_solar(52.0, 359.0, end, 3600.0), toa_incident_solar(52.0, -1.0, end, 3600.0));
}

TEST(GridForcings, TimeOfDayDayOfYearAndLatLon) {
  const std::vector<double> lat = {60.0, 0.0}, lon = {0.0, 90.0, 270.0};
  std::vector<float> v(6);
  derived_forcing("sin_time_of_day", kMarch20 + 6 * 3600.0, 3600.0, lat, lon, v.data());  // 06 UTC
  EXPECT_NEAR(v[0], 1.0, 1e-6);                                                           // 06 local at 0 E
  EXPECT_NEAR(v[1], 0.0, 1e-6);                                                           // 12 local at 90 E
  EXPECT_NEAR(v[2], 0.0, 1e-6);                                                           // 00 local at 270 E
  EXPECT_EQ(v[3], v[0]);  // the same at every latitude
  derived_forcing("cos_time_of_day", kMarch20 + 6 * 3600.0, 3600.0, lat, lon, v.data());
  EXPECT_NEAR(v[1], -1.0, 1e-6);
  EXPECT_NEAR(v[2], 1.0, 1e-6);
  // 2023 has 365 days: 2 July 12:00 is half way through it.
  EXPECT_NEAR(year_fraction(static_cast<double>(days_from_civil(2023, 7, 2)) * 86400.0 + 43200.0), 0.5, 1e-12);
  EXPECT_NEAR(year_fraction(static_cast<double>(days_from_civil(2024, 1, 1)) * 86400.0), 0.0, 1e-12);
  derived_forcing("cos_day_of_year", static_cast<double>(days_from_civil(2023, 7, 2)) * 86400.0 + 43200.0, 3600.0,
                  lat, lon, v.data());
  EXPECT_NEAR(v[4], -1.0, 1e-6);
  derived_static("sin_lat", lat, lon, v.data());
  EXPECT_NEAR(v[0], std::sin(60 * kDeg), 1e-7);
  EXPECT_EQ(v[3], 0.0f);
  derived_static("cos_lon", lat, lon, v.data());
  EXPECT_NEAR(v[1], 0.0, 1e-7);
  EXPECT_NEAR(v[2], 0.0, 1e-7);
  EXPECT_EQ(derived_forcing_channels({"toa_radiation", "time_of_day"}, "k"),
            (std::vector<std::string>{"toa_radiation", "sin_time_of_day", "cos_time_of_day"}));
  EXPECT_EQ(test::error_message([] { derived_static_channels({"orography"}, "x.nc: derived_statics"); }),
            "x.nc: derived_statics: unknown derived input 'orography' (known: lat_lon)");
}

TEST(GridTime, CfUnitsAsXarrayAndCdsWriteThem) {
  const TimeUnits h = parse_time_units("hours since 1900-01-01 00:00:00.0", "t");
  EXPECT_EQ(h.seconds_per_unit, 3600.0);
  EXPECT_EQ(h.epoch_seconds, -2208988800.0);
  EXPECT_EQ(parse_time_units("seconds since 1970-01-01", "t").epoch_seconds, 0.0);
  EXPECT_EQ(parse_time_units("days since 2000-01-01T12:00:00Z", "t").epoch_seconds, 946728000.0);
  EXPECT_EQ(parse_time_units("minutes since 2000-01-01 01:00:00+01:00", "t").epoch_seconds, 946684800.0);
  EXPECT_EQ(civil_from_days(days_from_civil(2024, 2, 29)).day, 29);
  EXPECT_EQ(test::error_message([] { parse_time_units("months since 2000-01-01", "f.nc: coordinate 'time'"); }),
            "f.nc: coordinate 'time': time units 'months since 2000-01-01' are not 'UNIT since yyyy-mm-dd[ "
            "hh:mm:ss]' (UNIT days, hours, minutes or seconds)");
}

// wxeval --init's times: written as the messages show them, read as the user types them.
TEST(GridTime, IsoTimesOfInitialTimes) {
  EXPECT_EQ(iso_time(946728000.0), "2000-01-01T12:00");
  EXPECT_EQ(iso_time(-2208988800.0 + 3600.0 * 30), "1900-01-02T06:00");
  EXPECT_EQ(parse_iso_time("2000-01-01T12:00", "--init"), 946728000.0);
  EXPECT_EQ(parse_iso_time("2000-01-01T12", "--init"), 946728000.0);
  EXPECT_EQ(parse_iso_time("2000-01-01 12:00:00", "--init"), 946728000.0);
  EXPECT_EQ(parse_iso_time(iso_time(1553990400.0), "--init"), 1553990400.0);
  EXPECT_EQ(test::error_message([] { parse_iso_time("yesterday", "--init"); }),
            "--init: 'yesterday' is not a time yyyy-mm-dd[Thh[:mm[:ss]]]");
}

TEST(GridTime, TheStepAndItsGaps) {
  // 3-hourly with 6 missing steps between 12 h and 33 h, and one bad time (index 9).
  std::vector<double> t;
  for (double h : {0, 3, 6, 9, 12, 33, 36, 39, 42, 45, 48, 51}) t.push_back(h * 3600);
  std::vector<char> bad(t.size(), 0);
  bad[9] = 1;
  const TimeAxis a = time_axis(t, bad, 3, "f.nc");
  EXPECT_EQ(a.step_s, 3 * 3600.0);
  EXPECT_EQ(a.gaps, 1u);
  EXPECT_EQ(a.missing_steps, 6u);
  EXPECT_EQ(a.starts, (std::vector<std::size_t>{0, 1, 2, 5, 6}));
  t[3] = 10 * 3600;
  EXPECT_EQ(test::error_message([&] { time_axis(t, {}, 3, "f.nc"); }),
            "f.nc: irregular time coordinate: the difference between indices 0 and 1 (10800 s) is not a multiple "
            "of the step (7200 s)");
}

}  // namespace
