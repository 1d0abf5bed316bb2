// The `hdf5_fields` data source: any named datasets of one HDF5 file as fields, for data that is
// neither a table nor an image set (token sequences, scenes, graphs). A dataset `name` [N, ...] is a
// fixed field; a dataset `name` [E, ...] with a companion `name_offsets` [N + 1] is a ragged field
// (row r holds elements [offsets[r], offsets[r + 1]), Note [ragged fields] in field.hpp). float32/64
// are read as float32, 32-bit integers as int32, other integers as int64.
#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "data/hdf5_tabular.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5.hpp"

namespace hpct {

namespace {

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

class FieldsDataset : public Dataset {
 public:
  FieldsDataset(const std::string& file, const std::vector<std::string>& names) : file_(file), names_(names) {
    if (names.empty())
      throw Error(file + ": hdf5_fields needs the deck key `fields` (dataset names)", ExitCode::bad_input);
    if (names.size() > static_cast<std::size_t>(kMaxFields))
      throw Error(file + ": at most " + std::to_string(kMaxFields) + " fields", ExitCode::bad_input);
    const h5::File f = h5::File::open_read(file);
    offsets_.resize(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string& name = names[i];
      const h5::DatasetInfo di = h5::info(f, name);
      if (di.dims.empty() || di.dims.size() > 4)
        throw Error(file + ": dataset '" + name + "' must have 1 to 4 dimensions", ExitCode::bad_input);
      FieldSpec s;
      s.name = name;
      if (di.is_float) s.dtype = DType::f32;
      else if (di.is_integer) s.dtype = di.type_size == 4 ? DType::i32 : DType::i64;
      else throw Error(file + ": dataset '" + name + "' must hold numbers", ExitCode::bad_input);
      s.row_shape.rank = static_cast<int>(di.dims.size()) - 1;
      for (std::size_t d = 1; d < di.dims.size(); ++d)
        s.row_shape.dim[d - 1] = static_cast<std::int64_t>(di.dims[d]);
      std::uint64_t n = di.dims[0];
      if (h5::exists(f, name + "_offsets")) {
        s.ragged = true;
        offsets_[i] = read_offsets(f, name, di.dims[0]);
        n = offsets_[i].size() - 1;
        for (std::uint64_t r = 0; r < n; ++r)
          s.max_row_elements = std::max(s.max_row_elements, offsets_[i][r + 1] - offsets_[i][r]);
      }
      if (i == 0) rows_ = n;
      else if (n != rows_)
        throw Error(file + ": fields '" + names[0] + "' and '" + name + "' have different row counts (" +
                        std::to_string(rows_) + " vs " + std::to_string(n) + ")",
                    ExitCode::bad_input);
      specs_.push_back(s);
    }
    if (rows_ == 0) throw Error(file + ": the fields have no rows", ExitCode::bad_input);
  }
  std::string description() const override { return file_; }
  std::uint64_t rows() const override { return rows_; }
  std::vector<FieldSpec> fields() const override { return specs_; }
  const std::vector<std::uint64_t>& ragged_offsets(int field) const override {
    const auto& o = offsets_.at(static_cast<std::size_t>(field));
    if (o.empty()) return Dataset::ragged_offsets(field);
    return o;
  }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override {
    // Runs of consecutive rows, each one block read (rows of these data sets are large: scenes).
    if (rows.empty()) return kNoBadValue;
    const h5::File f = h5::File::open_read(file_);  // once: a sparse selection is many runs
    for (std::size_t i = 0; i < rows.size();) {
      std::size_t j = i + 1;
      while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
      read_range(f, rows[i], j - i, out, i);
      i = j;
    }
    return kNoBadValue;
  }
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    if (count == 0) return kNoBadValue;
    read_range(h5::File::open_read(file_), first, count, out, 0);
    return kNoBadValue;
  }
  std::string describe_row(std::uint64_t row, int field) const override {
    return file_ + ": dataset '" + names_.at(static_cast<std::size_t>(field)) + "': row " + std::to_string(row);
  }

 private:
  std::vector<std::uint64_t> read_offsets(const h5::File& f, const std::string& name,
                                          std::uint64_t elements) const {
    const std::vector<long long> raw = h5::read_all<long long>(f, name + "_offsets");
    const std::string what = file_ + ": dataset '" + name + "_offsets'";
    if (raw.empty()) throw Error(what + " is empty (it needs rows + 1 entries)", ExitCode::bad_input);
    if (raw[0] != 0) throw Error(what + ": index 0 is " + std::to_string(raw[0]) + ", not 0", ExitCode::bad_input);
    for (std::size_t i = 1; i < raw.size(); ++i)
      if (raw[i] < raw[i - 1])
        throw Error(what + ": index " + std::to_string(i) + " is smaller than the one before (offsets must ascend)",
                    ExitCode::bad_input);
    if (static_cast<std::uint64_t>(raw.back()) != elements)
      throw Error(what + ": index " + std::to_string(raw.size() - 1) + ", the last, is " +
                      std::to_string(raw.back()) + " but '" + name + "' has " + std::to_string(elements) +
                      " elements",
                  ExitCode::bad_input);
    return std::vector<std::uint64_t>(raw.begin(), raw.end());
  }
  // Rows [first, first + count) into out, starting at row `at_row` of each buffer.
  void read_range(const h5::File& f, std::uint64_t first, std::uint64_t count, const std::vector<FieldBuffer>& out,
                  std::size_t at_row) const {
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      const FieldSpec& s = specs_[i];
      std::uint64_t from = first, n = count, into = at_row;
      if (s.ragged) {
        const auto& o = offsets_[i];
        const std::uint64_t base = at_row == 0 ? 0 : out[i].offsets[at_row];
        for (std::uint64_t r = 0; r <= count; ++r) out[i].offsets[at_row + r] = base + o[first + r] - o[first];
        from = o[first], n = o[first + count] - o[first], into = base;
      }
      const std::uint64_t w = s.width();
      if (s.dtype == DType::f32)
        h5::read_row_range(f, names_[i], from, n, w, static_cast<float*>(out[i].values) + into * w);
      else if (s.dtype == DType::i32)
        h5::read_row_range(f, names_[i], from, n, w, static_cast<int*>(out[i].values) + into * w);
      else h5::read_row_range(f, names_[i], from, n, w, static_cast<long long*>(out[i].values) + into * w);
    }
  }
  std::string file_;
  std::vector<std::string> names_;
  std::uint64_t rows_ = 0;
  std::vector<FieldSpec> specs_;
  std::vector<std::vector<std::uint64_t>> offsets_;
};

void declare_fields_keys(deck::Schema& s) {
  s.add_string("fields", "",
               "hdf5_fields: comma-separated dataset names, each a field; `name` with `name_offsets` [N + 1] "
               "is ragged");
}

std::shared_ptr<const Dataset> open_fields(const deck::Deck& deck, const std::string& file) {
  return std::make_shared<FieldsDataset>(file, split_names(deck.get_string("fields")));
}

bool recognises_fields(const deck::Deck& deck, const std::string& file) {
  return has_hdf5_extension(file) && !deck.get_string("fields").empty();
}

}  // namespace

DataSourceKind hdf5_fields_source() {
  return {"hdf5_fields", "named HDF5 datasets as fields (key fields; name_offsets makes a field ragged)",
          declare_fields_keys, recognises_fields, open_fields};
}

}  // namespace hpct
