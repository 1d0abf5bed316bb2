// HDF5 with RAII handles and typed reads/writes of row-major arrays. Every failure is an hpct::Error
// naming the file and dataset. Files are opened per rank with the default (sec2) driver: reads are
// independent, so a rank that fails cannot leave the others inside a collective HDF5 call.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hpct::h5 {

// Owns one hid_t and closes it with the matching H5*close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset();
  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

class File {
 public:
  static File open_read(const std::string& path);
  // Creates (truncates) a file for writing.
  static File create(const std::string& path);
  // Opens an existing file for reading and writing.
  static File open_rw(const std::string& path);
  // Creates (truncates) a file that every rank of `comm` writes together (MPI-IO driver, parallel
  // HDF5 only: see parallel_available()). Every rank must make this call and every later call on
  // the file with the same arguments, attributes included; closing it is collective too.
  static File create_collective(const std::string& path, MPI_Comm comm);
  // A file that lives only in memory (HDF5 core driver); image() returns its bytes. Outputs that
  // must survive a full disk are built this way and written by write_file_atomically, so an I/O
  // error is ours to handle and never leaves HDF5 with a half-closed file.
  static File create_in_memory(const std::string& name);
  std::vector<char> image() const;
  hid_t id() const { return handle_.id(); }
  const std::string& path() const { return path_; }
  void flush() const;

 private:
  // Takes ownership of a file id from H5Fopen/H5Fcreate, or throws "path: failure" when it is < 0.
  static File adopt(const std::string& path, hid_t id, const char* failure, ExitCode code = ExitCode::failure);
  Handle handle_;
  std::string path_;
};

struct DatasetInfo {
  std::vector<std::uint64_t> dims;
  bool is_float = false;    // H5T_FLOAT
  bool is_integer = false;  // H5T_INTEGER
  std::size_t type_size = 0;
};

bool exists(const File& f, const std::string& name);
// Throws "file: dataset 'name' not found" when missing.
DatasetInfo info(const File& f, const std::string& name);

// Reads the listed rows (ascending, unique) of a 2-D dataset [n, cols] into `out`
// (rows.size() x cols, row-major), converting to T. Rows are read as runs of consecutive indices.
template <class T>
void read_rows(const File& f, const std::string& name, const std::vector<std::uint64_t>& rows, std::uint64_t cols,
               T* out);
// Reads a contiguous block of rows [first, first + count) of a 1-D or 2-D dataset.
template <class T>
void read_row_range(const File& f, const std::string& name, std::uint64_t first, std::uint64_t count,
                    std::uint64_t cols, T* out);
// Reads a whole dataset (any rank) into a flat vector.
template <class T>
std::vector<T> read_all(const File& f, const std::string& name);

// Writes a dataset of the given shape from row-major data; intermediate groups are created.
template <class T>
void write(const File& f, const std::string& name, const std::vector<std::uint64_t>& dims, const T* data);

// Writes a dataset of the given shape whose rows (along the first dimension) come in pieces:
// `fill(out, rows)` puts the next `rows` rows, row-major, into `out`. The file is the same, byte for
// byte, as write() of the whole array gives (Note [a contiguous dataset in pieces] in
// hdf5_pieces.cpp); memory holds one piece of about `piece_bytes` (at least one row).
template <class T>
void write_in_pieces(const File& f, const std::string& name, const std::vector<std::uint64_t>& dims,
                     const std::function<void(T* out, std::uint64_t rows)>& fill,
                     std::size_t piece_bytes = std::size_t{16} << 20);

// A ragged field as data_format hdf5_fields reads it: `name` [elements, element_dims...] and
// `name_offsets` [rows + 1] (offsets.back() elements).
template <class T>
void write_ragged(const File& f, const std::string& name, std::vector<std::uint64_t> element_dims,
                  const std::vector<long long>& offsets, const std::vector<T>& data) {
  element_dims.insert(element_dims.begin(), static_cast<std::uint64_t>(offsets.back()));
  write(f, name, element_dims, data.data());
  write(f, name + "_offsets", {static_cast<std::uint64_t>(offsets.size())}, offsets.data());
}

// The HDF5 library is the parallel (MPI-IO) build: File::create_collective works.
bool parallel_available();

// Collective: creates dataset `name` [dims] in a file from File::create_collective, and each rank
// writes its rows [first_row, first_row + rows) along the first dimension from `data` (row-major,
// possibly none) in one collective MPI-IO transfer.
template <class T>
void write_rows_collective(const File& f, const std::string& name, const std::vector<std::uint64_t>& dims,
                           std::uint64_t first_row, std::uint64_t rows, const T* data);

// Attributes on an object (a group or dataset path, "/" for the file). Texts of any length (see
// long_attributes in hdf5.cpp).
void write_attr(const File& f, const std::string& object, const std::string& key, const std::string& value);
void write_attr(const File& f, const std::string& object, const std::string& key, double value);
void write_attr(const File& f, const std::string& object, const std::string& key, long long value);
bool has_attr(const File& f, const std::string& object, const std::string& key);
std::string read_attr_string(const File& f, const std::string& object, const std::string& key);
double read_attr_double(const File& f, const std::string& object, const std::string& key);
long long read_attr_int(const File& f, const std::string& object, const std::string& key);

// Names of all datasets below `group`, as paths relative to it ("fc0/weight"), sorted.
std::vector<std::string> list_datasets(const File& f, const std::string& group = "/");

}  // namespace hpct::h5
