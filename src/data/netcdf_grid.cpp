// The `netcdf` data source: a NetCDF-4 file as xarray writes it (gridded variables over time, y and
// x in any order, float32 or float64; CDS's ERA5 files with valid_time, number and expver; a level
// dimension picked by name@level) read through netCDF-C as forecasting samples (grid_samples.hpp;
// docs/gnn.md, "Data").
#include <netcdf.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "data/cf_files.hpp"
#include "data/cf_grid.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5_detail.hpp"

namespace hpct {

namespace {

// Note [netCDF under the HDF5 lock]: netCDF-4 files are HDF5 files, and netCDF-C calls into the
// same HDF5 library that checkpoints write with from the main thread while the loader thread
// reads. Debian's HDF5 has no thread-safety lock, so every netCDF call holds the wrapper's.
using Lock = h5::detail::LibraryLock;
std::recursive_mutex& nc_mutex() { return h5::detail::library_mutex(); }

void check(int status, const std::string& what) {
  if (status != NC_NOERR) throw Error(what + ": " + nc_strerror(status), ExitCode::bad_input);
}

long long file_bytes(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? -1 : static_cast<long long>(n);
}

// An open file, closed on every path out (errors included), seen as CF arrays (cf_grid.hpp).
class NcArrays : public CfArrays {
 public:
  explicit NcArrays(const std::string& path) : path_(path) {
    const Lock lock(nc_mutex());
    // Note [beats from the open]: HDF5 can loop forever inside nc_open on a damaged file.
    Heartbeat::beat_current("opening a NetCDF file", path);
    const int status = nc_open(path.c_str(), NC_NOWRITE, &nc_);
    // netCDF-C says "HDF error" or "Unknown file format" for a file cut short by a download.
    if (status == NC_EHDFERR || status == NC_ENOTNC) {
      const std::string zip = zip_archive_hint(path);
      throw Error(path + ": " + nc_strerror(status) +
                      (zip.empty() ? " (not a NetCDF file, or one cut short: " + std::to_string(file_bytes(path)) +
                                         " bytes)"
                                   : zip),
                  ExitCode::bad_input);
    }
    check(status, path);
  }
  ~NcArrays() override {
    const Lock lock(nc_mutex());
    nc_close(nc_);
  }
  NcArrays(const NcArrays&) = delete;
  NcArrays& operator=(const NcArrays&) = delete;

  bool has(const std::string& var) const override {
    const Lock lock(nc_mutex());
    int id = -1;
    return nc_inq_varid(nc_, var.c_str(), &id) == NC_NOERR;
  }
  std::vector<std::string> dimensions(const std::string& var) const override {
    const Lock lock(nc_mutex());
    std::vector<std::string> names;
    for (const int d : dims(var)) {
      char name[NC_MAX_NAME + 1] = {0};
      check(nc_inq_dimname(nc_, d, name), where(var));
      names.emplace_back(name);
    }
    return names;
  }
  std::vector<std::size_t> shape(const std::string& var) const override {
    const Lock lock(nc_mutex());
    std::vector<std::size_t> lengths;
    for (const int d : dims(var)) {
      std::size_t len = 0;
      check(nc_inq_dimlen(nc_, d, &len), where(var));
      lengths.push_back(len);
    }
    return lengths;
  }
  std::string text(const std::string& var, const char* attribute) const override {
    const Lock lock(nc_mutex());
    const int v = id(var);
    std::size_t len = 0;
    nc_type type = NC_NAT;
    if (nc_inq_att(nc_, v, attribute, &type, &len) != NC_NOERR || type != NC_CHAR) return "";
    std::string s(len, '\0');
    if (nc_get_att_text(nc_, v, attribute, s.data()) != NC_NOERR) return "";
    return s.c_str();  // without a trailing NUL some writers store
  }
  bool number(const std::string& var, const char* attribute, double& value) const override {
    const Lock lock(nc_mutex());
    const int v = id(var);
    std::size_t len = 0;
    nc_type type = NC_NAT;
    return nc_inq_att(nc_, v, attribute, &type, &len) == NC_NOERR && len == 1 && type != NC_CHAR &&
           type != NC_STRING && nc_get_att_double(nc_, v, attribute, &value) == NC_NOERR;
  }
  std::vector<double> missing_values(const std::string& var) const override {
    std::vector<double> out;
    const double wrap = unsigned_wrap(var);
    for (const char* a : {"_FillValue", "missing_value"}) {
      double m = 0;
      if (number(var, a, m) && !std::isnan(m)) out.push_back(m < 0 ? m + wrap : m);
    }
    return out;
  }
  bool numeric_data(const std::string& var) const override {
    const nc_type type = type_of(var);
    return type == NC_FLOAT || type == NC_DOUBLE || type == NC_SHORT || type == NC_USHORT || type == NC_BYTE ||
           type == NC_UBYTE;
  }
  void read(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
            float* out) const override {
    const double wrap = unsigned_wrap(var);
    const Lock lock(nc_mutex());
    check(nc_get_vara_float(nc_, id(var), start.data(), count.data(), out), where(var));
    if (wrap > 0) unwrap(out, count, static_cast<float>(wrap));
  }
  void read(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
            double* out) const override {
    const double wrap = unsigned_wrap(var);
    const Lock lock(nc_mutex());
    check(nc_get_vara_double(nc_, id(var), start.data(), count.data(), out), where(var));
    if (wrap > 0) unwrap(out, count, wrap);
  }

 private:
  // Note [_Unsigned]: NetCDF-3 has no unsigned integers; netCDF-Java, xarray and the NUG store
  // uint8/uint16 data (packed satellite and reanalysis fields) as byte/short with _Unsigned "true".
  // netCDF-C reads them signed: a stored 40000 came back as -25536 (a temperature 65.5 K low),
  // silently. The stored value and the fill values are read as the unsigned ones, as xarray reads
  // them; 2^8 or 2^16 to add to a negative one, else 0.
  double unsigned_wrap(const std::string& var) const {
    const nc_type type = type_of(var);
    if (type != NC_BYTE && type != NC_SHORT) return 0;
    std::string u = text(var, "_Unsigned");
    for (char& c : u) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return u == "true" ? (type == NC_BYTE ? 256.0 : 65536.0) : 0.0;
  }
  template <class T>
  static void unwrap(T* out, const std::vector<std::size_t>& count, T wrap) {
    std::size_t n = 1;
    for (const std::size_t c : count) n *= c;
    for (std::size_t i = 0; i < n; ++i)
      if (out[i] < 0) out[i] += wrap;
  }
  nc_type type_of(const std::string& var) const {
    const Lock lock(nc_mutex());
    nc_type type = NC_NAT;
    check(nc_inq_vartype(nc_, id(var), &type), where(var));
    return type;
  }
  std::string where(const std::string& var) const { return path_ + ": variable '" + var + "'"; }
  int id(const std::string& var) const {
    int v = -1;
    check(nc_inq_varid(nc_, var.c_str(), &v), where(var));
    return v;
  }
  std::vector<int> dims(const std::string& var) const {
    const int v = id(var);
    int nd = 0;
    check(nc_inq_varndims(nc_, v, &nd), where(var));
    std::vector<int> d(static_cast<std::size_t>(nd));
    check(nc_inq_vardimid(nc_, v, d.data()), where(var));
    return d;
  }

  std::string path_;
  int nc_ = -1;
};

void declare_netcdf_keys(deck::Schema& s) { GridSamples::declare_keys(s); }

std::shared_ptr<const Dataset> open_netcdf(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<CfGridDataset>(file, deck, cf_files_opener(file, [](const std::string& path) {
                                           return std::make_unique<NcArrays>(path);
                                         }));
}

bool recognises_netcdf(const deck::Deck&, const std::string& file) {
  for (const std::string ext : {".nc", ".nc4", ".cdf"})  // .cdf: NOAA's and Ferret's classic files
    if (file.size() > ext.size() && file.compare(file.size() - ext.size(), ext.size(), ext) == 0) return true;
  return false;
}

}  // namespace

DataSourceKind netcdf_grid_source() {
  return {"netcdf",
          "NetCDF-4 gridded variables over (time, y, x) in any order, as xarray writes them (keys "
          "state_variables, forcing_variables, static_variables, derived_forcings, derived_statics, ar_steps; "
          "fields state, targets, diff, grid, forcing, static)",
          declare_netcdf_keys, recognises_netcdf, open_netcdf};
}

}  // namespace hpct
