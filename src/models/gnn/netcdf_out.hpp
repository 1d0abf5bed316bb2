// NetCDF-4 writing shared by the gnn family's files (wxgen's data set, wxeval's forecasts): status
// checks that name what failed, text attributes, float32 variables laid out as xarray writes them.
#pragma once

#include <string>
#include <vector>

namespace hpct::netcdf_out {

// Throws hpct::Error(what + netCDF's message) when `status` is not NC_NOERR.
void check(int status, const std::string& what);
void text(int nc, int var, const char* name, const std::string& value);
// A float32 variable with NaN as _FillValue, its units and long name (either may be empty).
int data_variable(int nc, const char* name, const std::vector<int>& dims, const std::string& units,
                  const std::string& long_name);

}  // namespace hpct::netcdf_out
