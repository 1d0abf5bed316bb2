// Parquet files through the Parquet module (libhpctrain_parquet.so: src/parquet/, Apache Arrow),
// loaded the first time a program opens one (Note [Parquet module] in parquet_module.cpp).
#pragma once

#include <memory>
#include <string>

#include "parquet/parquet_file.hpp"

namespace hpct::io {

// `path` opened by the Parquet module; every call of the result throws hpct::Error (bad_input)
// naming the file. A program that finds no module (a build without Arrow, the GPU bundle) throws
// an Error naming the file, where it looked and how to get Parquet support.
std::unique_ptr<parquet::File> open_parquet(const std::string& path);

// Where the module was found ("" before the first open, or none found); for logs and tests.
std::string parquet_module_path();

}  // namespace hpct::io
