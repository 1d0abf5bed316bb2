// NetCDF-4 writing helpers (see netcdf_out.hpp).
#include "models/gnn/netcdf_out.hpp"

#include <netcdf.h>

#include <limits>

#include "core/error.hpp"

namespace hpct::netcdf_out {

void check(int status, const std::string& what) {
  if (status != NC_NOERR) throw Error(what + ": " + nc_strerror(status), ExitCode::bad_input);
}

void text(int nc, int var, const char* name, const std::string& value) {
  check(nc_put_att_text(nc, var, name, value.size(), value.c_str()), name);
}

int data_variable(int nc, const char* name, const std::vector<int>& dims, const std::string& units,
                  const std::string& long_name) {
  int id = -1;
  check(nc_def_var(nc, name, NC_FLOAT, static_cast<int>(dims.size()), dims.data(), &id), name);
  const float fill = std::numeric_limits<float>::quiet_NaN();
  check(nc_put_att_float(nc, id, "_FillValue", NC_FLOAT, 1, &fill), name);
  if (!units.empty()) text(nc, id, "units", units);
  if (!long_name.empty()) text(nc, id, "long_name", long_name);
  return id;
}

}  // namespace hpct::netcdf_out
