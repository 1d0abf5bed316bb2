// anemoi-datasets' gridded Zarr layout (ECMWF's anemoi-datasets `create`): one array `data` over
// (time, variable, ensemble, cell), `dates`, `latitudes` and `longitudes` over cells, the variable
// names and the grid's `field_shape` in the root attributes. It is read as CF arrays, one per
// variable over (time, latitude, longitude) on a regular grid, else over (time, y, x) with 2-D
// latitude and longitude, so the zarr source gives the same samples as from a NetCDF file of the
// same fields (cf_grid.hpp; docs/weather-data.md).
#pragma once

#include <memory>
#include <string>

#include "data/cf_grid.hpp"

namespace hpct {

// Whether `store` is an anemoi-datasets store (root attributes `variables` and `field_shape`).
bool is_anemoi_store(const std::string& store);

// The store's variables, time, latitude and longitude as CF arrays, read through `raw` (the store's
// own arrays); an error names the store when the grid has no rows and columns (a 1-D field_shape)
// or it holds more than one ensemble member.
std::unique_ptr<CfArrays> anemoi_arrays(const std::string& store, std::unique_ptr<CfArrays> raw);

}  // namespace hpct
