// wxeval's forecast file (--forecast OUT.nc): the model's forecasts from every held-out initial time as
// a NetCDF-4 file in WeatherBench2's forecast layout, which xarray opens (times and lead times decoded)
// and WeatherBench2's evaluation scores against the user's own ERA5 (docs/weather-forecasts.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hpct {

// What the file describes: the grid and times of the data file the forecasts start from.
struct ForecastGrid {
  std::size_t ny = 0, nx = 0;
  std::vector<double> y, x;  // the data file's coordinates (degrees on a latitude-longitude grid)
  bool latlon = false;       // lat, lon: each point's (ny nx), degrees
  std::vector<double> lat, lon;
  bool timed = false;              // the data file has a time coordinate: init_times are seconds since 1970
  std::vector<double> init_times;  // per initial time (without a time coordinate: its index in the file)
  double step_s = 0;               // the time step (timed)
  int leads = 0;
  std::vector<std::string> variables;  // the state variables, as the data file names them
  std::string source;                  // the global `source` attribute: the weights and data files
};

// Note [forecast layout]: one float32 variable per state variable over (time, prediction_timedelta,
// <grid>): `time` the initial times (CF units, seconds since 1970-01-01), `prediction_timedelta` the
// lead times (units hours, or seconds when the step is not whole hours; xarray decodes both as
// timedelta64), as WeatherBench2 names them. The grid: (latitude, longitude) when every point's
// position is its row's and column's coordinate (a regular latitude-longitude grid, as ERA5 from the
// CDS, WeatherBench2's and anemoi's regridded stores); (values) with latitude(values), longitude(values)
// for one row of points (reduced Gaussian and other unstructured grids, cfgrib's layout); else (y, x)
// with the file's coordinates and, where known, 2-D latitude(y, x), longitude(y, x). Without a time
// coordinate `time` holds the initial time's index and `prediction_timedelta` counts steps.
class ForecastFile {
 public:
  // Creates the file under a temporary name beside `path` (rank 0 only): nothing is at `path`
  // until commit(), and a run that fails leaves no half-written file.
  ForecastFile(const std::string& path, const ForecastGrid& grid);
  ~ForecastFile();
  ForecastFile(const ForecastFile&) = delete;
  ForecastFile& operator=(const ForecastFile&) = delete;
  // Initial times [first, first + n) of grid.init_times: forecasts [n][lead][variable][ny nx].
  void write(std::size_t first, std::size_t n, const float* forecasts);
  void commit();  // closes the file and renames it to `path`

 private:
  std::string path_, tmp_;
  int nc_ = -1;
  std::vector<int> vars_;
  std::size_t points_ = 0, leads_ = 0;
  std::vector<std::size_t> grid_shape_;  // the grid's dimensions' lengths
};

}  // namespace hpct
