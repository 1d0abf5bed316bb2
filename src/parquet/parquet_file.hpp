// A Parquet file's columns as plain C++17 values: the interface of the Parquet module
// (libhpctrain_parquet.so, arrow_file.cpp, the only code that includes Apache Arrow), which
// programs load when they first meet a Parquet file (io/parquet_module.hpp, Note [Parquet module]).
// Header-only, no Arrow type and no hpctrain library in it: both sides of dlopen compile it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hpct::parquet {

// How a column reads: numbers (int*, uint*, float, double, decimal, null-only), text (string,
// large_string, string_view, or a dictionary of them: pandas' category), booleans (0 and 1), or
// not at all (lists, structs, timestamps, binary, ...: `type` says which).
enum class ColumnKind : std::uint8_t { number, text, boolean, unsupported };

struct ColumnInfo {
  std::string name;
  ColumnKind kind = ColumnKind::unsupported;
  std::string type;  // Arrow's name of the type ("double", "dictionary<values=string, ...>"), for messages
};

// One column of a row group. number/boolean: `f` (or `d` when read as doubles), null[i] 1 where
// the cell is null (the value then 0). text: dict (the distinct strings, first seen first) and
// code[i] into it, -1 for null.
struct ColumnData {
  std::vector<float> f;
  std::vector<double> d;
  std::vector<std::uint8_t> null;
  std::vector<std::string> dict;
  std::vector<std::int32_t> code;
};

// An open Parquet file. Every error is a std::runtime_error whose message starts with the file's
// path (io::open_parquet turns it into a bad_input Error).
class File {
 public:
  virtual ~File() = default;
  virtual const std::vector<ColumnInfo>& columns() const = 0;
  virtual std::int64_t rows() const = 0;
  // Rows of each row group, in order (their sum is rows()).
  virtual const std::vector<std::int64_t>& group_rows() const = 0;
  // Row group `group`'s columns `columns` (indices into columns(), readable kinds only) into
  // out[k]. Note [Parquet floats]: numbers as float32 (`f`), or as double (`d`) with `doubles`.
  virtual void read_group(int group, const std::vector<int>& columns, bool doubles,
                          std::vector<ColumnData>& out) = 0;
};

// The module's one entry point, extern "C" hpctrain_parquet_open_v1, looked up by this name after
// dlopen (the v1: this header's layout; a module of another layout has another name). Opens
// `path` (the caller owns the result); throws std::runtime_error naming the file when it cannot be
// read as Parquet (truncated, not Parquet). Both sides share one libstdc++, so the exception and
// the std types cross.
#define HPCTRAIN_PARQUET_ENTRY "hpctrain_parquet_open_v1"
using OpenFn = File* (*)(const std::string& path);

}  // namespace hpct::parquet
