// Parquet files as table rows (io/table_rows.hpp), read by Apache Arrow's C++ Parquet reader: the
// only code that includes Arrow (C++20) is parquet_rows.cpp, behind this C++17 header (Note
// [Parquet by registration] in io/table_rows.cpp: a program that reads Parquet calls
// enable_parquet_rows() first).
#pragma once

namespace hpct::parquet {

// Makes io::open_table_rows read Parquet files in this program; false (and nothing set) in a build
// without Arrow, where a Parquet file stays an error naming the file and how to get a build with it.
bool enable_parquet_rows();

}  // namespace hpct::parquet
