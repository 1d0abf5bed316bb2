// The `hdf5` tabular data source: checks at open, row and block reads (see hdf5_tabular.hpp).
#include "data/hdf5_tabular.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5.hpp"

namespace hpct {

namespace {

std::uint64_t check_dataset(const h5::File& f, const std::string& name, std::uint64_t& cols) {
  const h5::DatasetInfo di = h5::info(f, name);
  if (!di.is_float)
    throw Error(f.path() + ": dataset '" + name + "' must be float32 or float64", ExitCode::bad_input);
  if (di.dims.size() == 1) {
    cols = 1;
  } else if (di.dims.size() == 2) {
    cols = di.dims[1];
  } else {
    throw Error(f.path() + ": dataset '" + name + "' must be 2-D [N, features], has rank " +
                    std::to_string(di.dims.size()),
                ExitCode::bad_input);
  }
  if (cols == 0) throw Error(f.path() + ": dataset '" + name + "' has no columns", ExitCode::bad_input);
  return di.dims[0];
}

}  // namespace

TabularSource describe_tabular(const std::string& file, const std::string& inputs, const std::string& targets) {
  const h5::File f = h5::File::open_read(file);
  TabularSource s;
  s.file = file, s.inputs = inputs, s.targets = targets;
  const std::uint64_t n_in = check_dataset(f, inputs, s.d_in);
  const std::uint64_t n_out = check_dataset(f, targets, s.d_out);
  if (n_in != n_out)
    throw Error(file + ": datasets '" + inputs + "' and '" + targets + "' have different row counts (" +
                    std::to_string(n_in) + " vs " + std::to_string(n_out) + ")",
                ExitCode::bad_input);
  if (n_in == 0) throw Error(file + ": dataset '" + inputs + "' has no rows", ExitCode::bad_input);
  s.rows = n_in;
  return s;
}

std::vector<FieldSpec> TabularDataset::fields() const { return supervised_fields(src_.d_in, src_.d_out); }

std::string TabularDataset::describe_row(std::uint64_t row, int field) const {
  return src_.file + ": dataset '" + (field == 0 ? src_.inputs : src_.targets) + "': row " +
         std::to_string(src_.first_row + row);
}

std::string TabularDataset::file_attribute(const std::string& name) const {
  const h5::File f = h5::File::open_read(src_.file);
  return h5::has_attr(f, "/", name) ? h5::read_attr_string(f, "/", name) : std::string();
}

long long read_tabular_rows(const TabularSource& src, const std::vector<std::uint64_t>& rows, float* x, float* y) {
  if (rows.empty()) return kNoBadValue;
  const h5::File f = h5::File::open_read(src.file);
  std::vector<std::uint64_t> file_rows(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) file_rows[i] = rows[i] + src.first_row;
  h5::read_rows(f, src.inputs, file_rows, src.d_in, x);
  h5::read_rows(f, src.targets, file_rows, src.d_out, y);
  return kNoBadValue;
}

long long read_tabular_block(const TabularSource& src, std::uint64_t first, std::uint64_t count, float* x,
                             float* y) {
  if (count == 0) return kNoBadValue;
  const h5::File f = h5::File::open_read(src.file);
  h5::read_row_range(f, src.inputs, src.first_row + first, count, src.d_in, x);
  h5::read_row_range(f, src.targets, src.first_row + first, count, src.d_out, y);
  return kNoBadValue;
}

bool has_hdf5_extension(const std::string& file) {
  for (const char* ext : {".h5", ".hdf5", ".hdf", ".he5"}) {
    const std::string e(ext);
    if (file.size() > e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

namespace {

void declare_tabular_keys(deck::Schema& s) {
  s.add_string("inputs_dataset", "inputs", "hdf5: name of the inputs dataset [N, d_in] in data_file");
  s.add_string("targets_dataset", "targets", "hdf5: name of the targets dataset [N, d_out] in data_file");
}

std::shared_ptr<const Dataset> open_tabular(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<TabularDataset>(describe_tabular(file, deck.get_string("inputs_dataset"),
                                                           deck.get_string("targets_dataset")));
}

bool recognises_tabular(const deck::Deck&, const std::string& file) { return has_hdf5_extension(file); }

}  // namespace

DataSourceKind hdf5_tabular_source() {
  return {"hdf5", "HDF5 inputs [N, d_in] and targets [N, d_out], float32 or float64 (fields inputs, targets)",
          declare_tabular_keys, recognises_tabular, open_tabular};
}

}  // namespace hpct
