// predict's tables for network weights files (see predict_tables.hpp).
#include "predict_tables.hpp"

#include <initializer_list>

#include "core/error.hpp"
#include "data/parquet_table.hpp"
#include "io/hdf5.hpp"
#include "io/table_rows.hpp"
#include "train/table_inputs.hpp"

namespace hpct::tools {

namespace {

// A CSV/TSV or Parquet data file read as the model's training table was (Note [table inputs] in
// train/table_inputs.cpp): its columns checked, text columns coded by the model's categories.
std::shared_ptr<const Dataset> open_table(const TableRequest& o, io::TextFormat format, std::uint64_t width,
                                          const Comm& comm, TableEncoding& encoding,
                                          std::shared_ptr<const TableDataset>& text) {
  std::shared_ptr<const TableDataset> table;
  comm.run_agreed([&] {
    const h5::File f = h5::File::open_read(o.weights);
    if (!h5::has_attr(f, "/", "table"))
      throw Error(o.weights + ": the model was not trained on a CSV/TSV table (it has no 'table' attribute); " +
                      o.data + " must be HDF5",
                  ExitCode::bad_input);
    encoding = TableEncoding::from_json(h5::read_attr_string(f, "/", "table"), o.weights + ": attribute 'table'");
    if (static_cast<std::uint64_t>(encoding.width()) != width)
      throw Error(o.weights + ": attribute 'table' gives " + std::to_string(encoding.width()) +
                      " inputs a row, the model reads " + std::to_string(width),
                  ExitCode::bad_input);
    io::TextOptions opt;
    opt.format = format;
    opt.header = encoding.header;
    opt.label_column = o.labelled ? encoding.label_column : -1;
    if (o.labelled && !encoding.label.empty()) opt.label_name = encoding.label;
    const std::string& w = o.weight_column;  // as train's weight_column: an index or a header name
    if (!w.empty() && w.find_first_not_of("0123456789") == std::string::npos && w.size() <= 7)
      opt.weight_column = std::stoi(w);
    else opt.weight_name = w;
    if (io::is_parquet(o.data)) table = std::make_shared<ParquetTable>(o.data, opt);
    else table = std::make_shared<TextTableDataset>(o.data, opt);
  });
  TableEncodingOptions check;
  check.whose = "the model";
  agree_table_encoding(*table, check, &encoding, comm);
  text = table;
  return encoded_table(table, encoding);
}

// One of the weights file's LibSVM reading attributes: `absent` when the file has none (it predates
// the key), else one of `allowed`; any other value is a damaged or foreign file, refused rather than
// read as some default.
std::string reading_attr(const h5::File& f, const std::string& file, const std::string& key,
                         std::initializer_list<const char*> allowed, const char* absent) {
  if (!h5::has_attr(f, "/", key)) return absent;
  std::string v = h5::read_attr_string(f, "/", key);
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += std::string(list.empty() ? "\"" : " or \"") + a + "\"";
  }
  throw Error(file + ": attribute '" + key + "' is \"" + v + "\": must be " + list, ExitCode::bad_input);
}

// A LibSVM data file read as the model's training file was (Note [predicting from LibSVM] in
// train/trainer_data.cpp): the weights file's libsvm_absent and libsvm_base (none: 0 and 1), as many
// features as the model reads.
std::shared_ptr<const TextTableDataset> open_libsvm(const TableRequest& o, std::uint64_t width, const Comm& comm) {
  std::shared_ptr<const TextTableDataset> table;
  comm.run_agreed([&] {
    if (!o.weight_column.empty())
      throw Error("predict: --weight-column: " + o.data + " is LibSVM: give its weights in --weight-file",
                  ExitCode::bad_input);
    const h5::File f = h5::File::open_read(o.weights);
    io::TextOptions opt;
    opt.format = io::TextFormat::libsvm;
    opt.absent_zero = reading_attr(f, o.weights, "libsvm_absent", {"zero", "missing"}, "zero") == "zero";
    opt.libsvm_base = reading_attr(f, o.weights, "libsvm_base", {"0", "1"}, "1") == "0" ? 0 : 1;
    opt.num_features = static_cast<long long>(width);
    table = std::make_shared<TextTableDataset>(o.data, opt);
  });
  return table;
}

}  // namespace

std::shared_ptr<const Dataset> open_network_table(const TableRequest& request, io::TextFormat format,
                                                  std::uint64_t width, const Comm& comm, TableEncoding& encoding,
                                                  std::shared_ptr<const TableDataset>& text) {
  if (format == io::TextFormat::libsvm) return open_libsvm(request, width, comm);
  return open_table(request, format, width, comm, encoding, text);
}

}  // namespace hpct::tools
