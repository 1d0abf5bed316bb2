// GRIB messages through ecCodes' C API (grib_messages.hpp): files, keys, grids, valid times and
// values, for the grib data source's index and reader (grib_grid.cpp).
#include "data/grib_messages.hpp"

#include <cmath>

#include "core/error.hpp"
#include "data/grid_time.hpp"

namespace hpct::grib {

std::mutex& grib_mutex() {
  static std::mutex m;
  return m;
}

GribFile::GribFile(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
  if (!f_) throw Error(path + ": cannot open", ExitCode::bad_input);
}

GribFile::~GribFile() {
  if (h_) codes_handle_delete(h_);
  std::fclose(f_);
}

codes_handle* GribFile::next() {
  if (h_) codes_handle_delete(h_);
  int err = 0;
  h_ = codes_handle_new_from_file(nullptr, f_, PRODUCT_GRIB, &err);
  if (err != CODES_SUCCESS)
    throw Error(path_ + ": " + codes_get_error_message(err) +
                    (err == CODES_END_OF_FILE || err == CODES_PREMATURE_END_OF_FILE
                         ? " (a message cut short: the file ends inside it; a download cut short?)"
                         : ""),
                ExitCode::bad_input);
  return h_;
}

codes_handle* GribFile::at(long offset) {
  if (std::fseek(f_, offset, SEEK_SET) != 0) throw Error(path_ + ": cannot seek", ExitCode::bad_input);
  codes_handle* h = next();
  if (!h) throw Error(path_ + ": no message at offset " + std::to_string(offset), ExitCode::bad_input);
  return h;
}

codes_handle* GribFiles::at(const Location& l) {
  if (!open_[l.file]) open_[l.file] = std::make_unique<GribFile>(paths_[l.file]);
  return open_[l.file]->at(l.offset);
}

std::string get_string(codes_handle* h, const char* key) {
  char buf[256] = {0};
  std::size_t len = sizeof buf;
  return codes_get_string(h, key, buf, &len) == CODES_SUCCESS ? std::string(buf) : std::string();
}

namespace {
// A numeric key through ecCodes' getter for its type, or an error naming the message and the key.
template <class T>
T get_number(codes_handle* h, const char* key, const std::string& where,
             int (*get)(const codes_handle*, const char*, T*)) {
  T v = 0;
  const int err = get(h, key, &v);
  if (err != CODES_SUCCESS)
    throw Error(where + ": key '" + key + "': " + codes_get_error_message(err), ExitCode::bad_input);
  return v;
}
}  // namespace

long get_long(codes_handle* h, const char* key, const std::string& where) {
  return get_number<long>(h, key, where, codes_get_long);
}

double get_double(codes_handle* h, const char* key, const std::string& where) {
  return get_number<double>(h, key, where, codes_get_double);
}

namespace {

// Note [projected GRIB grids]: a grid other than regular_ll whose points form ni x nj rows and
// columns (Lambert conformal as CERRA's, polar stereographic, rotated or regular Gaussian, Mercator)
// is read with each point's latitude and longitude from ecCodes' geoiterator (the keys latitudes
// and longitudes, in the order of the values, so placed as the values are). A reduced grid
// (reduced_gg: ECMWF's octahedral O96, N320, ...), an unstructured or a HEALPix grid has no rows and
// columns: its points read as one row, each with its position. Spectral fields are refused.
void read_points(codes_handle* h, Grid& g, const std::string& where) {
  const auto n = static_cast<std::size_t>(g.ni * g.nj);
  std::vector<double> lat(n), lon(n);
  std::size_t got_lat = n, got_lon = n;
  if (codes_get_double_array(h, "latitudes", lat.data(), &got_lat) != CODES_SUCCESS ||
      codes_get_double_array(h, "longitudes", lon.data(), &got_lon) != CODES_SUCCESS || got_lat != n ||
      got_lon != n)
    throw Error(where + ": ecCodes gives no latitude and longitude for each of the " + std::to_string(n) +
                    " points of this grid",
                ExitCode::bad_input);
  g.point_lat.resize(n), g.point_lon.resize(n);
  const auto nx = static_cast<std::size_t>(g.ni), ny = static_cast<std::size_t>(g.nj);
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      const std::size_t k = g.j_consecutive ? i * ny + j : j * nx + i;
      g.point_lat[j * nx + i] = lat[k], g.point_lon[j * nx + i] = lon[k];
    }
}

}  // namespace

Grid grid_of(codes_handle* h, const std::string& where) {
  const std::string type = get_string(h, "gridType");
  Grid g;
  if (type != "regular_ll") {
    if (type == "sh")
      throw Error(where +
                      ": gridType 'sh' (spherical harmonics) has no grid points; the grib source reads "
                      "regular_ll, projected (lambert, polar_stereographic, rotated_ll, regular_gg, mercator), "
                      "reduced (reduced_gg: octahedral O96, N320, ...) and unstructured grids",
                  ExitCode::bad_input);
    if (type.compare(0, 8, "reduced_") == 0 || type == "unstructured_grid" || type == "healpix") {
      g.ni = get_long(h, "numberOfDataPoints", where), g.nj = 1, g.one_row = true;  // one row of points
      read_points(h, g, where);
      return g;
    }
    long ni = 0, nj = 0;
    const bool ij = codes_get_long(h, "Ni", &ni) == CODES_SUCCESS && codes_get_long(h, "Nj", &nj) == CODES_SUCCESS;
    g.ni = ij ? ni : get_long(h, "Nx", where), g.nj = ij ? nj : get_long(h, "Ny", where);
    g.j_consecutive = get_long(h, "jPointsAreConsecutive", where) != 0;
    read_points(h, g, where);
    return g;
  }
  g.ni = get_long(h, "Ni", where), g.nj = get_long(h, "Nj", where);
  g.j_consecutive = get_long(h, "jPointsAreConsecutive", where) != 0;
  const double lat0 = get_double(h, "latitudeOfFirstGridPointInDegrees", where);
  const double lon0 = get_double(h, "longitudeOfFirstGridPointInDegrees", where);
  const double di = get_double(h, "iDirectionIncrementInDegrees", where);
  const double dj = get_double(h, "jDirectionIncrementInDegrees", where);
  const double si = get_long(h, "iScansNegatively", where) ? -di : di;
  const double sj = get_long(h, "jScansPositively", where) ? dj : -dj;
  for (long j = 0; j < g.nj; ++j) g.lat.push_back(lat0 + static_cast<double>(j) * sj);
  for (long i = 0; i < g.ni; ++i) g.lon.push_back(lon0 + static_cast<double>(i) * si);
  return g;
}

double valid_seconds(codes_handle* h, const std::string& where) {
  const long date = get_long(h, "validityDate", where), time = get_long(h, "validityTime", where);
  const long long days = days_from_civil(date / 10000, static_cast<int>(date / 100 % 100),
                                         static_cast<int>(date % 100));
  const long hours = time / 100, minutes = time % 100;  // hhmm
  return static_cast<double>(days) * 86400.0 + static_cast<double>(hours) * 3600.0 +
         static_cast<double>(minutes) * 60.0;
}

void decode(codes_handle* h, const Grid& grid, const std::string& where, std::vector<double>& values, float* dst) {
  std::size_t count = 0;
  if (codes_get_size(h, "values", &count) != CODES_SUCCESS || count != static_cast<std::size_t>(grid.ni * grid.nj))
    throw Error(where + ": a message of " + std::to_string(count) + " values on a " + std::to_string(grid.nj) +
                    " x " + std::to_string(grid.ni) + " grid",
                ExitCode::bad_input);
  values.resize(count);
  const int err = codes_get_double_array(h, "values", values.data(), &count);
  if (err != CODES_SUCCESS) throw Error(where + ": " + codes_get_error_message(err), ExitCode::bad_input);
  const bool bitmap = get_long(h, "bitmapPresent", where) != 0;
  const double missing = bitmap ? get_double(h, "missingValue", where) : 0;
  const auto nx = static_cast<std::size_t>(grid.ni), ny = static_cast<std::size_t>(grid.nj);
  for (std::size_t j = 0; j < ny; ++j)
    for (std::size_t i = 0; i < nx; ++i) {
      const double v = values[grid.j_consecutive ? i * ny + j : j * nx + i];
      dst[j * nx + i] = bitmap && v == missing ? NAN : static_cast<float>(v);
    }
}

}  // namespace hpct::grib
