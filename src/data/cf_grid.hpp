// The gridded sources that read named arrays with attributes as xarray writes them (netcdf through
// netCDF-C, zarr through its JSON metadata and c-blosc): the CF conventions they share, on top of
// GridSamples (grid_samples.hpp): dimensions recognised by `axis` or by name (time/valid_time,
// lat/latitude, lon/longitude, ...), levels picked by name@level, ERA5's extra dimensions of length
// one (number, expver), packing (scale_factor, add_offset) and missing values (_FillValue,
// missing_value), the CF time coordinate, and a bad value named by variable and index.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/grid_samples.hpp"

namespace hpct {

// One open file or store: what the format gives of its arrays (variables), by name.
class CfArrays {
 public:
  virtual ~CfArrays() = default;
  virtual bool has(const std::string& var) const = 0;
  virtual std::vector<std::string> dimensions(const std::string& var) const = 0;  // slowest first
  virtual std::vector<std::size_t> shape(const std::string& var) const = 0;
  virtual std::string text(const std::string& var, const char* attribute) const = 0;  // "" when absent
  // A numeric attribute of one value (false when absent).
  virtual bool number(const std::string& var, const char* attribute, double& value) const = 0;
  // Stored values that mean "missing" (_FillValue, missing_value; NaN left out).
  virtual std::vector<double> missing_values(const std::string& var) const = 0;
  // Whether the stored type is one the sources read as data (float32, float64, int16).
  virtual bool numeric_data(const std::string& var) const = 0;
  // The stored values of [start, start + count) (one entry per dimension) in storage order.
  virtual void read(const std::string& var, const std::vector<std::size_t>& start,
                    const std::vector<std::size_t>& count, float* out) const = 0;
  virtual void read(const std::string& var, const std::vector<std::size_t>& start,
                    const std::vector<std::size_t>& count, double* out) const = 0;
};

// CfArrays whose two reads are one member template of `Derived`:
// `template <typename T> void read_as(var, start, count, T* out) const` (befriend this class).
template <typename Derived>
class CfArraysReadAs : public CfArrays {
 public:
  void read(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
            float* out) const override {
    static_cast<const Derived*>(this)->read_as(var, start, count, out);
  }
  void read(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
            double* out) const override {
    static_cast<const Derived*>(this)->read_as(var, start, count, out);
  }

 private:
  CfArraysReadAs() = default;  // only a Derived is one
  friend Derived;
};

class CfGridDataset : public GridSamples {
 public:
  using Opener = std::function<std::unique_ptr<CfArrays>()>;
  // `open` opens the file (again for each reader: a format may keep per-handle state).
  CfGridDataset(const std::string& file, const deck::Deck& deck, Opener open);

  std::string describe_row(std::uint64_t row, int field) const override;

 private:
  enum Axis : int { kTime = 0, kY = 1, kX = 2, kOther = 3 };
  // One variable as the deck names it (z@500): its dimensions' roles and, for dimensions other than
  // time, y and x, the index taken (a level, or 0 of a dimension of length 1 such as CDS's number).
  struct Variable {
    std::string name, base;
    std::vector<int> axis;
    std::vector<std::size_t> index;
    std::array<int, 3> position{{-1, -1, -1}};
    double scale = 1, offset = 0;  // Note [packed and missing values]
    std::vector<double> missing;
  };
  class CfReader;
  std::unique_ptr<Reader> reader() const override;

  Variable open_variable(const CfArrays& f, const std::string& name, bool timed, Layout& g);
  Axis axis_of(const CfArrays& f, const std::string& dim) const;
  std::pair<std::string, std::string> cell_coordinates(const CfArrays& f, const std::string& dim) const;
  bool is_level(const CfArrays& f, const std::string& dim) const;
  bool is_degrees(const CfArrays& f, const std::string& dim, Axis a) const;
  std::size_t level_index(const CfArrays& f, const std::string& dim, std::size_t len, double level,
                          const std::string& what) const;
  bool constant_in_time(const CfArrays& f, const Variable& v, const std::size_t* lengths) const;
  void read_slab(const CfArrays& f, const Variable& v, std::size_t t0, std::size_t nt, std::size_t ny,
                 std::size_t nx, float* dst) const;
  void read_coordinates(const CfArrays& f, Layout& g) const;
  void forecast_times(const CfArrays& f, Layout& g) const;  // Note [a forecast as data]

  static constexpr const char* kLeadDim = "prediction_timedelta";  // WeatherBench2's lead dimension

  Opener open_;
  std::vector<Variable> vars_;     // state, forcing, in deck order
  std::vector<Variable> statics_;  // the file's static variables
  std::array<std::string, 3> dim_;
  std::size_t times_ = 0;
  std::string init_dim_;  // a forecast's initial-time dimension, of one value (Note [a forecast as data])
};

}  // namespace hpct
