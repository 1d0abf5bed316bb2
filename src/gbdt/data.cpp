// Data loading: HDF5 by hyperslab (read_row_range), text files by io::read_text_block; every rank
// reads only its block of rows (text files are scanned whole for line boundaries, then only the
// rank's lines are parsed).
#include "gbdt/data.hpp"

#include <cmath>

#include "core/error.hpp"
#include "gbdt/binning.hpp"
#include "io/hdf5.hpp"
#include "io/text_tables.hpp"

namespace hpct::gbdt {

std::string resolve_format(const std::string& file, const std::string& format) {
  if (format != "auto" && format != "hdf5" && format != "csv" && format != "tsv" && format != "libsvm")
    input_error(file, 0, "data_format", format + " is a network data source; gbdt reads hdf5, csv, tsv or libsvm");
  if (format != "auto") return format;
  const auto dot = file.find_last_of('.');
  const std::string ext = dot == std::string::npos ? "" : file.substr(dot + 1);
  if (ext == "h5" || ext == "hdf5") return "hdf5";
  io::TextFormat tf;
  if (io::format_from_extension(file, tf))
    return tf == io::TextFormat::csv ? "csv" : tf == io::TextFormat::tsv ? "tsv" : "libsvm";
  input_error(file, 0, "data_format",
              "cannot tell the format from the extension; set data_format (hdf5, csv, tsv, libsvm)");
}

namespace {

Data load_hdf5(const DataSource& src, const Comm& comm) {
  Data d;
  d.file = src.file;
  const auto f = h5::File::open_read(src.file);
  const auto xi = h5::info(f, src.inputs_dataset);
  const auto yi = h5::info(f, src.targets_dataset);
  if (xi.dims.size() != 2)
    input_error(src.file, 0, "inputs_dataset", "'" + src.inputs_dataset + "' must be 2-D [rows, features]");
  if (yi.dims.empty() || yi.dims.size() > 2 || yi.dims[0] != xi.dims[0] || (yi.dims.size() == 2 && yi.dims[1] != 1))
    input_error(src.file, 0, "targets_dataset",
                "'" + src.targets_dataset + "' must be [rows] or [rows, 1] with the inputs' row count");
  d.global_rows = static_cast<long long>(xi.dims[0]);
  d.cols = static_cast<long long>(xi.dims[1]);
  if (src.num_features >= 0 && d.cols != src.num_features)
    input_error(src.file, 0, "inputs_dataset",
                "has " + std::to_string(d.cols) + " features, expected " + std::to_string(src.num_features));
  d.first_row = d.global_rows * comm.rank() / comm.size();
  d.rows = d.global_rows * (comm.rank() + 1) / comm.size() - d.first_row;
  d.x.resize(static_cast<std::size_t>(d.rows * d.cols));
  d.y.resize(static_cast<std::size_t>(d.rows));
  h5::read_row_range(f, src.inputs_dataset, static_cast<std::uint64_t>(d.first_row),
                     static_cast<std::uint64_t>(d.rows), static_cast<std::uint64_t>(d.cols), d.x.data());
  h5::read_row_range(f, src.targets_dataset, static_cast<std::uint64_t>(d.first_row),
                     static_cast<std::uint64_t>(d.rows), 1, d.y.data());
  d.line.resize(static_cast<std::size_t>(d.rows));
  for (long long i = 0; i < d.rows; ++i)
    d.line[static_cast<std::size_t>(i)] = static_cast<int>(d.first_row + i + 1);
  return d;
}

}  // namespace

Data load_data(const DataSource& src, const std::string& name, const Comm& comm) {
  Data d;
  std::string format;
  io::Table t;
  bool text = false;
  comm.run_agreed([&] {
    format = resolve_format(src.file, src.format);
    if (format == "hdf5") {
      d = load_hdf5(src, comm);
      return;
    }
    text = true;
    io::TextOptions opt;
    opt.format = format == "csv"   ? io::TextFormat::csv
                 : format == "tsv" ? io::TextFormat::tsv
                                   : io::TextFormat::libsvm;
    opt.label_column = src.label_column;
    opt.header = src.header;
    opt.libsvm_base = src.libsvm_base;
    opt.num_features = src.num_features;
    opt.allow_infinite = src.allow_infinite;
    t = io::read_text_block(src.file, opt, comm.rank(), comm.size());
  });
  if (text) {
    // LibSVM blocks only know their own highest id: the data set's width is the maximum.
    if (format == "libsvm" && src.num_features < 0) io::widen(t, comm.max(t.cols));
    d.file = t.file;
    d.rows = t.rows;
    d.cols = t.cols;
    d.first_row = t.first_row;
    d.global_rows = t.global_rows;
    d.x = std::move(t.x);
    d.y = std::move(t.y);
    d.line = std::move(t.line);
  }
  d.name = name;
  // Infinities become +-FLT_MAX here, as in prediction (see binning.hpp).
  for (float& v : d.x) v = clamp_inf(v);
  if (!src.weight_file.empty()) {
    comm.run_agreed([&] {
      d.w = io::read_column_block(src.weight_file, d.first_row, d.rows, d.global_rows);
      for (std::size_t i = 0; i < d.w.size(); ++i)
        if (!(d.w[i] >= 0) || !std::isfinite(d.w[i]))
          input_error(src.weight_file, 0, "weight_file",
                      "weight of row " + std::to_string(d.first_row + static_cast<long long>(i) + 1) +
                          " is negative or not finite");
    });
  }
  return d;
}

Data split_tail(Data& d, long long cut, const std::string& name) {
  Data v;
  v.name = name;
  v.file = d.file;
  v.cols = d.cols;
  v.global_rows = d.global_rows - cut;
  const long long keep = std::max(0LL, std::min(d.rows, cut - d.first_row));
  v.first_row = std::max(0LL, d.first_row - cut);
  v.rows = d.rows - keep;
  const auto k = static_cast<std::size_t>(keep);
  const auto c = static_cast<std::size_t>(d.cols);
  v.x.assign(d.x.begin() + static_cast<std::ptrdiff_t>(k * c), d.x.end());
  v.y.assign(d.y.begin() + static_cast<std::ptrdiff_t>(k), d.y.end());
  v.line.assign(d.line.begin() + static_cast<std::ptrdiff_t>(k), d.line.end());
  if (!d.w.empty()) {
    v.w.assign(d.w.begin() + static_cast<std::ptrdiff_t>(k), d.w.end());
    d.w.resize(k);
  }
  d.x.resize(k * c);
  d.y.resize(k);
  d.line.resize(k);
  d.rows = keep;
  d.global_rows = cut;
  return v;
}

}  // namespace hpct::gbdt
