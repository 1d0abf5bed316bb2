// Text tables as network inputs: the encoding agreed over ranks, its JSON form and the data set
// that reads rows through it (see table_inputs.hpp).
#include "train/table_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/log.hpp"
#include "data/weighted_rows.hpp"

namespace hpct {

// Note [table inputs]
// A network reads numbers, so a CSV/TSV table's categorical columns (the columns holding text, and
// categorical_columns) become one-hot blocks (or codes for the mlp's embeddings, Note [category
// embeddings] in gbdt/table_encoding.cpp): a column of K categories is K inputs, 1 at the row's
// category's code and 0 elsewhere, in the column's place among the inputs. The codes are the trees'
// (Note [category codes]): agreed over ranks from the whole file's counts, so the inputs of a row do
// not depend on the rank count or on which rank read which category first. A missing cell and a
// category the training file never showed (a validation file's, predict's) give a block of zeros:
// the network sees "none of the known categories", never a wrong one. A text label column of a
// classifier (loss cross_entropy) is coded the same way into class indices. The weights file keeps
// the columns, the categories and the class names (attribute "table"), so predict maps a new file's
// strings to the inputs training used.


namespace {

std::string label_text(const TableEncoding& e) { return gbdt::label_column_text(e.label, e.label_column); }

// With a header on both sides, the first column one has and the other lacks, for a count mismatch's
// message: predict on a table that keeps its row weight column is the usual cause, and the name says so.
std::string odd_column(const TableEncoding& given, const TableColumns& t, const std::string& whose) {
  if (t.names.empty() || given.columns.empty()) return "";
  const auto has = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  for (std::size_t f = 0; f < t.names.size(); ++f)
    if (!has(given.columns, t.names[f]))
      return ": its column '" + t.names[f] + "' (feature " + std::to_string(f) + ") is not one of " + whose + "'s" +
             (whose == "the model" ? " (a row weight column is not a feature: --weight-column " + t.names[f] + ")"
                                   : std::string());
  for (const std::string& n : given.columns)
    if (!has(t.names, n)) return ": " + whose + "'s column '" + n + "' is not in it";
  return "";
}

// The file's columns against the encoding it must follow (the training data's, the model's).
void check_columns(const TableEncoding& given, const TableColumns& t, const std::string& whose) {
  if (t.cols != given.cols)
    input_error(t.file, 0, "",
                "has " + std::to_string(t.cols) + " feature columns, " + whose + " has " +
                    std::to_string(given.cols) + odd_column(given, t, whose));
  if (t.names.empty() || given.columns.empty()) return;
  for (std::size_t f = 0; f < t.names.size(); ++f)
    if (t.names[f] != given.columns[f])
      input_error(t.file, 0, "",
                  "column '" + t.names[f] + "' (feature " + std::to_string(f) + ") where " + whose + " has '" +
                      given.columns[f] + "'");
}

std::unordered_map<std::string, int> code_map(const std::vector<std::string>& names) {
  std::unordered_map<std::string, int> m;
  for (std::size_t c = 0; c < names.size(); ++c) m.emplace(names[c], static_cast<int>(c));
  return m;
}

}  // namespace

TableEncoding agree_table_encoding(const TableDataset& table, const TableEncodingOptions& o,
                                   const TableEncoding* given, const Comm& comm) {
  const TableColumns& t = table.columns();
  const bool labelled = t.label_column >= 0;
  const long long first = t.rows * comm.rank() / comm.size();
  const long long rows = t.rows * (comm.rank() + 1) / comm.size() - first;
  const auto n = static_cast<std::size_t>(rows);
  std::vector<float> x(n * static_cast<std::size_t>(t.cols)), y(labelled ? n : 0);
  std::vector<int> line(n);
  io::TextStrings strings;
  strings.keep_label = labelled && (given ? !given->classes.empty() : o.text_labels);
  std::vector<char> declared;
  comm.run_agreed([&] {
    if (given) check_columns(*given, t, o.whose);
    std::vector<std::uint64_t> ids(n);
    std::iota(ids.begin(), ids.end(), static_cast<std::uint64_t>(first));
    table.read_table_rows(ids.data(), n, x.data(), labelled ? y.data() : nullptr, &strings, nullptr);
    for (std::size_t r = 0; r < n; ++r) line[r] = static_cast<int>(table.file_line(ids[r]));
    if (!given)
      declared = gbdt::declared_categorical(o.categorical_columns, t.names, t.cols, t.label_column, t.file);
  });
  TableEncoding e;
  e.header = t.header;
  e.columns = t.names;
  e.cols = t.cols;
  e.label_column = t.label_column;
  e.label = t.label_name;
  e.categories = gbdt::agree_categories({&x, rows, t.cols, &strings, &t.names, &line, t.file}, declared,
                                        given ? &given->categories : nullptr, o.whose, comm);
  if (!given) comm.run_agreed([&] { choose_category_inputs(e, o.inputs, t.file, comm.rank() == 0); });
  if (!strings.keep_label) return given ? *given : e;
  // Text labels are categories too (Note [text labels]); only their check matters with `given`.
  std::vector<float> codes = y;
  const std::vector<std::string> classes = gbdt::agree_classes({&codes, rows, &strings,
                                                                static_cast<std::size_t>(t.cols), t.label_name,
                                                                t.label_column, &line, t.file},
                                                               given ? &given->classes : nullptr, o.whose, comm);
  if (given) return *given;
  e.classes = classes;
  return e;
}

namespace {

// Note [table inputs]: rows parsed with their text and written as the encoding's inputs.
class EncodedTable : public Dataset {
 public:
  EncodedTable(std::shared_ptr<const TableDataset> table, const TableEncoding& e)
      : table_(std::move(table)), e_(e), width_(e.width()), classes_(code_map(e.classes)) {
    const auto cols = static_cast<std::size_t>(e_.cols);
    codes_.resize(cols);
    names_.resize(static_cast<std::size_t>(width_));
    const std::vector<long long> at = e_.offsets();
    for (std::size_t f = 0; f < cols; ++f) {
      const auto off = static_cast<std::size_t>(at[f]);
      const std::string name = f < e_.columns.size() ? e_.columns[f] : "x" + std::to_string(f);
      if (!e_.categories.of(static_cast<int>(f))) names_[off] = name;
      else if (e_.is_embedded(static_cast<long long>(f))) names_[off] = name + " (code)";
      else
        for (std::size_t c = 0; c < e_.categories.names[f].size(); ++c)
          names_[off + c] = name + "=" + e_.categories.names[f][c];
      if (e_.categories.of(static_cast<int>(f))) codes_[f] = code_map(e_.categories.names[f]);
    }
  }
  std::string description() const override { return table_->description(); }
  std::uint64_t rows() const override { return table_->rows(); }
  std::vector<FieldSpec> fields() const override {
    std::vector<FieldSpec> f = supervised_fields(static_cast<std::uint64_t>(width_), 1);
    if (!labelled()) f.pop_back();
    else if (!e_.classes.empty()) {
      f[1].dtype = DType::i32;
      f[1].min_value = 0;
      f[1].max_value = static_cast<std::int64_t>(e_.classes.size()) - 1;
    }
    return f;
  }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override;
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override {
    std::vector<std::uint64_t> rows(count);
    std::iota(rows.begin(), rows.end(), first);
    return read_rows(rows, out);
  }
  // The inputs' bad value names its column (Note [mlp standardisation]: a missing number refused).
  std::string describe_row(std::uint64_t row, int field) const override;
  std::vector<std::string> value_names(int field) const override {
    return field == 0 ? names_ : table_->value_names(field);
  }
  long long file_line(std::uint64_t row) const override { return table_->file_line(row); }

 private:
  bool labelled() const { return table_->columns().label_column >= 0; }
  int code(const std::unordered_map<std::string, int>& m, const std::string& name) const {
    const auto it = m.find(name);
    return it == m.end() ? -1 : it->second;
  }

  std::shared_ptr<const TableDataset> table_;
  TableEncoding e_;
  long long width_;
  std::vector<std::unordered_map<std::string, int>> codes_;  // per categorical column: name -> code
  std::unordered_map<std::string, int> classes_;             // class name -> index
  std::vector<std::string> names_;                           // the inputs: "carat", "cut=Ideal", ...
};

std::string EncodedTable::describe_row(std::uint64_t row, int field) const {
  std::string where = table_->describe_row(row, field);
  if (field != 0) return where;
  std::vector<float> x(static_cast<std::size_t>(width_)), y(1);
  try {
    read_rows({row}, {{x.data(), nullptr}, {y.data(), nullptr}});
  } catch (const std::exception&) {
    return where;
  }
  const std::vector<long long> at = e_.offsets();
  for (long long f = 0; f < e_.cols; ++f)
    if (!e_.categories.of(static_cast<int>(f)) &&
        !std::isfinite(x[static_cast<std::size_t>(at[static_cast<std::size_t>(f)])]))
      return table_->where_row(row, e_.column_text(f));
  return where;
}

long long EncodedTable::read_rows(const std::vector<std::uint64_t>& rows,
                                  const std::vector<FieldBuffer>& out) const {
  const TableColumns& t = table_->columns();
  const std::size_t n = rows.size(), cols = static_cast<std::size_t>(t.cols);
  std::vector<float> x(n * cols), y(labelled() ? n : 0);
  io::TextStrings s;
  s.keep_label = labelled() && !e_.classes.empty();
  table_->read_table_rows(rows.data(), n, x.data(), labelled() ? y.data() : nullptr, &s, nullptr);
  const auto line = [&](std::size_t r) { return static_cast<int>(table_->file_line(rows[r])); };
  // The categorical columns' cells as codes (NaN: missing or unknown), then the inputs.
  for (std::size_t f = 0; f < cols; ++f) {
    if (!e_.categories.of(static_cast<int>(f))) {
      if (!s.cells[f].empty()) {  // a file checked by agree_table_encoding has none
        const auto& [row, id] = s.cells[f].front();
        input_error(t.file, line(row), "",
                    e_.column_text(static_cast<long long>(f)) + " holds '" + s.dict[f][id] +
                        "', not a number, but the model reads it as numbers");
      }
      continue;
    }
    const auto as_float = [](int c) { return c >= 0 ? static_cast<float>(c) : std::nanf(""); };
    for (std::size_t r = 0; r < n; ++r) {  // numbers name categories by their decimal form
      float& v = x[r * cols + f];
      if (!std::isnan(v)) v = as_float(code(codes_[f], gbdt::category_of_number(v)));
    }
    std::vector<float> dict_code(s.dict[f].size());
    for (std::size_t j = 0; j < dict_code.size(); ++j) dict_code[j] = as_float(code(codes_[f], s.dict[f][j]));
    for (const auto& [row, id] : s.cells[f]) x[row * cols + f] = dict_code[id];
  }
  encode_coded_rows(e_, x.data(), n, static_cast<float*>(out.at(0).values));
  if (!labelled()) return kNoBadValue;
  if (e_.classes.empty()) {
    std::copy(y.begin(), y.end(), static_cast<float*>(out.at(1).values));
    return kNoBadValue;
  }
  auto* label = static_cast<std::int32_t*>(out.at(1).values);
  for (std::size_t r = 0; r < n; ++r)
    label[r] = std::isnan(y[r]) ? -1 : code(classes_, gbdt::category_of_number(y[r]));
  for (const auto& [row, id] : s.cells[cols]) label[row] = code(classes_, s.dict[cols][id]);
  for (std::size_t r = 0; r < n; ++r)
    if (label[r] < 0) input_error(t.file, line(r), "", label_text(e_) + " holds a class the model does not know");
  return kNoBadValue;
}

}  // namespace

std::shared_ptr<const Dataset> encoded_table(std::shared_ptr<const TableDataset> table,
                                             const TableEncoding& encoding) {
  return std::make_shared<EncodedTable>(std::move(table), encoding);
}

std::optional<TableEncoding> encode_table_data(const deck::Deck& deck, std::shared_ptr<const Dataset>& data,
                                               std::shared_ptr<const Dataset>& validation, const Comm& comm) {
  if (const auto rows = std::dynamic_pointer_cast<const EncodedMemoryTable>(unweighted(data)))
    return rows->encoding();       // an ensemble member's rows (weighted or not)
  if (libsvm_table(data.get())) {  // numbers only, no encoding
    data = network_libsvm_reading(deck, data);
    if (validation) validation = network_libsvm_reading(deck, validation);
    return std::nullopt;
  }
  const auto table = std::dynamic_pointer_cast<const TableDataset>(data);
  if (!table) return std::nullopt;
  const auto key = [&](const char* name) { return deck.schema().find(name) ? deck.get_string(name) : ""; };
  TableEncodingOptions o;
  o.categorical_columns = key("categorical_columns");
  o.inputs = category_inputs(deck);
  o.text_labels = key("loss") == "cross_entropy";
  TableEncoding e = agree_table_encoding(*table, o, nullptr, comm);  // not const: returned by move
  if (!e.categorical()) return e;
  data = encoded_table(table, e);
  if (const auto val = std::dynamic_pointer_cast<const TableDataset>(validation)) {
    o.whose = "data_file";
    agree_table_encoding(*val, o, &e, comm);
    validation = encoded_table(val, e);
  }
  return e;
}

}  // namespace hpct
