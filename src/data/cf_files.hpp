// One gridded data set spread over several NetCDF files or Zarr stores, as the Copernicus store
// delivers ERA5 (single levels and pressure levels are separate requests; long periods come one
// file per month or year): `data_file` lists them (commas, glob patterns) and they read as one.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/cf_grid.hpp"

namespace hpct {

// The paths a `data_file` value names: comma-separated entries, each a path or a glob pattern (its
// matches in sorted order); a pattern that matches nothing is an error naming it.
std::vector<std::string> data_file_list(const std::string& data_file);

// The opener CfGridDataset takes for `data_file`: `open_one` of its one path, or of each of its
// paths combined (Note [several files]).
CfGridDataset::Opener cf_files_opener(const std::string& data_file,
                                      const std::function<std::unique_ptr<CfArrays>(const std::string&)>& open_one);

// Whether `dim` is the time dimension of f's variables: axis T, or named time, t or valid_time.
bool is_time_dimension(const CfArrays& f, const std::string& dim);

}  // namespace hpct
