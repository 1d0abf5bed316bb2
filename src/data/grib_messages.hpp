// GRIB messages through ecCodes' C API, for the grib data source (grib_grid.cpp): files read at a
// message's offset, keys whose errors name the file and message, a message's grid (regular,
// projected or reduced: Note [projected GRIB grids]), valid time and values.
#pragma once

#include <eccodes.h>

#include <cstddef>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hpct::grib {

// ecCodes' handles are created and read under this one lock (the loader thread and the main thread
// may read the same data set).
std::mutex& grib_mutex();

// An open file and the message at hand, freed on every path out.
class GribFile {
 public:
  explicit GribFile(const std::string& path);
  ~GribFile();
  GribFile(const GribFile&) = delete;
  GribFile& operator=(const GribFile&) = delete;
  // The next message (nullptr at the end), or the one at `offset`.
  codes_handle* next();
  codes_handle* at(long offset);

 private:
  std::string path_;
  FILE* f_;
  codes_handle* h_ = nullptr;
};

// A message's place: which of data_file's files, where in it, and its number there (from 1).
struct Location {
  std::size_t file = 0;
  long offset = 0;
  std::size_t number = 0;
};

// The files of data_file, each opened when first needed.
class GribFiles {
 public:
  explicit GribFiles(const std::vector<std::string>& paths) : paths_(paths), open_(paths.size()) {}
  codes_handle* at(const Location& l);

 private:
  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<GribFile>> open_;
};

// A key's value: "" when absent (get_string); an error naming `where` and the key (the others).
std::string get_string(codes_handle* h, const char* key);
long get_long(codes_handle* h, const char* key, const std::string& where);
double get_double(codes_handle* h, const char* key, const std::string& where);

// What the index keeps of a message.
struct Message {
  std::string short_name, cf_name, level_type;
  double level = 0, valid_s = 0;
  Location at;
  std::string where, run;  // "FILE: message N"; "data time DATE HHMM, step S" (for messages)
};

// The grid of a message: size, scanning and coordinates.
struct Grid {
  long ni = 0, nj = 0;
  bool j_consecutive = false;
  bool one_row = false;                      // reduced, unstructured, HEALPix: points, no rows and columns
  std::vector<double> lat, lon;              // regular_ll: per row j and column i, in the file's scanning order
  std::vector<double> point_lat, point_lon;  // another grid: per point j ni + i
  bool operator==(const Grid& o) const {
    return ni == o.ni && nj == o.nj && lat == o.lat && lon == o.lon && point_lat == o.point_lat &&
           point_lon == o.point_lon;
  }
};

// The message's grid (Note [projected GRIB grids]); spectral fields are refused.
Grid grid_of(codes_handle* h, const std::string& where);

// validityDate (yyyymmdd) and validityTime (hhmm) as seconds since 1970-01-01 UTC.
double valid_seconds(codes_handle* h, const std::string& where);

// A message's values into dst [nj][ni] in the grid's order, missing points (bitmap) as NaN; `values`
// is the caller's buffer (kept between calls). `where` names the variable in errors.
void decode(codes_handle* h, const Grid& grid, const std::string& where, std::vector<double>& values, float* dst);

}  // namespace hpct::grib
