// anemoi-datasets' gridded layout read as CF arrays over (time, latitude, longitude) (zarr_anemoi.hpp).
#include "data/zarr_anemoi.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "data/zarr_array.hpp"

namespace hpct {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The root group's attributes: v2's .zattrs or v3's zarr.json attributes (empty when neither parses).
json root_attributes(const std::string& store) {
  try {
    const fs::path v2 = fs::path(store) / ".zattrs", v3 = fs::path(store) / "zarr.json";
    if (fs::exists(v2)) return json::parse(read_zarr_file(v2));
    if (fs::exists(v3)) return json::parse(read_zarr_file(v3)).value("attributes", json::object());
    // NOLINTNEXTLINE(bugprone-empty-catch): the zarr source names a broken metadata file when it opens it.
  } catch (const std::exception&) {
  }
  return json::object();
}

// Note [anemoi layout]: anemoi-datasets writes every variable into one float32 array `data`
// [time, variable, ensemble, cell], the variable names in the root attribute `variables` (levels
// folded into the name: z_500), `dates` as datetime64[s], and the cells' `latitudes` and
// `longitudes`; `field_shape` [ny, nx] is the grid's shape when the source grid was 2-D. Cells are
// then in C order over (y, x). A regular latitude-longitude grid has one latitude per row and one
// longitude per column: the variables then read as (time, latitude, longitude) arrays. Any other
// (a projected grid: MEPS's or CERRA's Lambert conformal) reads as (time, y, x) with 2-D latitude
// and longitude over (y, x), CF's auxiliary coordinates, and a one-dimensional field_shape (an
// octahedral reduced Gaussian grid such as O96, any list of points) as (time, y, x) of one row
// (y of length 1). The rest (CF time, coordinates, samples) is the zarr source's as for any store.
class AnemoiArrays : public CfArraysReadAs<AnemoiArrays> {
 public:
  AnemoiArrays(const std::string& store, std::unique_ptr<CfArrays> raw, const json& attrs)
      : raw_(std::move(raw)), what_(store + ": anemoi-datasets store") {
    try {
      const auto names = attrs.at("variables").get<std::vector<std::string>>();
      for (std::size_t k = 0; k < names.size(); ++k) index_[names[k]] = k;
      field_ = attrs.at("field_shape").get<std::vector<std::size_t>>();
      metadata_ = attrs.value("variables_metadata", json::object());
    } catch (const std::exception& e) {
      refuse(std::string("root attributes: ") + e.what());
    }
    if (field_.empty() || field_.size() > 2)
      refuse("field_shape " + json(field_).dump() + " (one dimension of cells, or two: rows and columns)");
    for (const char* a : {"data", "dates", "latitudes", "longitudes"})
      if (!raw_->has(a)) refuse(std::string("no array '") + a + "'");
    const std::vector<std::size_t> shape = raw_->shape("data");
    // A reduced Gaussian or unstructured grid (field_shape [cells]) reads as one row of cells.
    ny_ = field_.size() == 2 ? field_[0] : 1, nx_ = field_.back();
    regular_ = field_.size() == 2;
    const std::size_t cells = ny_ * nx_;
    if (shape.size() != 4 || shape[1] != index_.size() || shape[3] != cells)
      refuse("array 'data' of shape " + json(shape).dump() + ", not (time, " + std::to_string(index_.size()) +
             " variables, ensemble, " + std::to_string(cells) + " cells of field_shape)");
    if (shape[2] != 1) refuse(std::to_string(shape[2]) + " ensemble members (the gridded sources read one)");
    times_ = shape[0];
    lat_.resize(cells), lon_.resize(cells);
    raw_->read("latitudes", {0}, {cells}, lat_.data());
    raw_->read("longitudes", {0}, {cells}, lon_.data());
    for (std::size_t c = 0; c < cells; ++c)
      regular_ = regular_ && lat_[c] == lat_[c - c % nx_] && lon_[c] == lon_[c % nx_];
    if (regular_) {  // one latitude per row, one longitude per column
      std::vector<double> rows, columns(lon_.begin(), lon_.begin() + static_cast<std::ptrdiff_t>(nx_));
      for (std::size_t y = 0; y < ny_; ++y) rows.push_back(lat_[y * nx_]);
      lat_ = rows, lon_ = columns;
    }
    ydim_ = regular_ ? "latitude" : "y", xdim_ = regular_ ? "longitude" : "x";
  }

  bool has(const std::string& var) const override {
    return var == "time" || var == "latitude" || var == "longitude" || index_.count(var) != 0;
  }
  std::vector<std::string> dimensions(const std::string& var) const override {
    if (var == "time") return {var};
    if (var == "latitude" || var == "longitude")
      return regular_ ? std::vector<std::string>{var} : std::vector<std::string>{ydim_, xdim_};
    return {"time", ydim_, xdim_};
  }
  std::vector<std::size_t> shape(const std::string& var) const override {
    if (var == "time") return {times_};
    if (!regular_ && (var == "latitude" || var == "longitude")) return {ny_, nx_};
    if (var == "latitude") return {ny_};
    if (var == "longitude") return {nx_};
    return {times_, ny_, nx_};
  }
  std::string text(const std::string& var, const char* attribute) const override {
    const std::string a = attribute;
    if (var == "time") return raw_->text("dates", attribute);
    if (var == "latitude" && a == "units") return "degrees_north";
    if (var == "longitude" && a == "units") return "degrees_east";
    const auto it = metadata_.find(var);
    if (it == metadata_.end() || !it->is_object()) return "";
    const auto v = it->find(a);
    return v != it->end() && v->is_string() ? v->get<std::string>() : "";
  }
  bool number(const std::string&, const char*, double&) const override { return false; }
  std::vector<double> missing_values(const std::string& var) const override {
    return index_.count(var) ? raw_->missing_values("data") : std::vector<double>{};
  }
  bool numeric_data(const std::string& var) const override {
    return index_.count(var) ? raw_->numeric_data("data") : true;
  }

 private:
  friend class CfArraysReadAs<AnemoiArrays>;
  [[noreturn]] void refuse(const std::string& why) const { throw Error(what_ + ": " + why, ExitCode::bad_input); }

  template <typename T>
  void read_as(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
               T* out) const {
    if (var == "time") return raw_->read("dates", start, count, out);
    if (var == "latitude" || var == "longitude") {  // 1-D (regular) or 2-D over (y, x)
      const std::vector<double>& c = var == "latitude" ? lat_ : lon_;
      const std::size_t rows = regular_ ? 1 : count[0], cols = regular_ ? count[0] : count[1];
      for (std::size_t j = 0; j < rows; ++j)
        for (std::size_t i = 0; i < cols; ++i)
          out[j * cols + i] = static_cast<T>(regular_ ? c[start[0] + i] : c[(start[0] + j) * nx_ + start[1] + i]);
      return;
    }
    // The cells of rows start[1] .. + count[1], columns start[2] .. + count[2]: one span of cells
    // per time read, then the columns picked from each row.
    const std::size_t k = index_.at(var), nt = count[0], ny = count[1], nx = count[2];
    const std::size_t first = start[1] * nx_ + start[2], span = (ny - 1) * nx_ + nx;
    std::vector<T> cells(nt * span);
    raw_->read("data", {start[0], k, 0, first}, {nt, 1, 1, span}, cells.data());
    for (std::size_t t = 0; t < nt; ++t)
      for (std::size_t y = 0; y < ny; ++y) std::copy_n(&cells[t * span + y * nx_], nx, &out[(t * ny + y) * nx]);
  }

  std::unique_ptr<CfArrays> raw_;
  std::string what_;
  std::map<std::string, std::size_t> index_;
  std::vector<std::size_t> field_;
  json metadata_;
  std::size_t times_ = 0, ny_ = 0, nx_ = 0;
  bool regular_ = true;
  std::string ydim_, xdim_;        // latitude, longitude (regular) or y, x
  std::vector<double> lat_, lon_;  // regular: per row and per column; else per cell
};

}  // namespace

bool is_anemoi_store(const std::string& store) {
  const json a = root_attributes(store);
  return a.contains("variables") && a.contains("field_shape");
}

std::unique_ptr<CfArrays> anemoi_arrays(const std::string& store, std::unique_ptr<CfArrays> raw) {
  return std::make_unique<AnemoiArrays>(store, std::move(raw), root_attributes(store));
}

}  // namespace hpct
