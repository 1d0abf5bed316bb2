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
#include "io/text_tables.hpp"

namespace hpct {

// Note [table inputs]
// A network reads numbers, so a CSV/TSV table's categorical columns (the columns holding text, and
// categorical_columns) become one-hot blocks (or codes for the mlp's embeddings, Note [category
// embeddings] below): a column of K categories is K inputs, 1 at the row's category's code and 0
// elsewhere, in the column's place among the inputs. The codes are the trees'
// (Note [category codes]): agreed over ranks from the whole file's counts, so the inputs of a row do
// not depend on the rank count or on which rank read which category first. A missing cell and a
// category the training file never showed (a validation file's, predict's) give a block of zeros:
// the network sees "none of the known categories", never a wrong one. A text label column of a
// classifier (loss cross_entropy) is coded the same way into class indices. The weights file keeps
// the columns, the categories and the class names (attribute "table"), so predict maps a new file's
// strings to the inputs training used.

// Note [category embeddings]
// A one-hot block costs one input (and one column of the first layer's weights) per category and
// says nothing shared between categories; a column of zip codes or product ids has thousands of them.
// With `category_embedding D` > 0, each categorical column of more than `onehot_max_categories`
// categories is instead one input holding its row's code, which the mlp looks up in the column's own
// table of K + 1 learned rows of D values (models/mlp/table_embedding.hpp), as an nn.Embedding per
// column concatenated with the other inputs before the first Linear. Row K is the missing row: a
// missing cell and a category the training file never showed (a validation file's, predict's) read
// it, so such rows share one learned vector (training trains it on the missing cells) instead of the
// one-hot path's zeros. The codes are those of Note [category codes], so 1 and N ranks look up the same
// rows; they are the last inputs of a row, in column order, after the numbers and one-hot blocks.
// max_categories bounds the one-hot blocks only: an embedding table of 100k rows is one parameter
// tensor, not 100k inputs. A code is held in a float input, exact below 2^24 categories.
constexpr long long kMaxEmbeddedCategories = (1LL << 24) - 1;

bool TableEncoding::is_embedded(long long f) const {
  return std::binary_search(embedded.begin(), embedded.end(), static_cast<int>(f));
}

long long TableEncoding::width() const {
  long long w = 0;
  for (long long f = 0; f < cols; ++f)
    w += categories.of(static_cast<int>(f)) && !is_embedded(f)
             ? static_cast<long long>(categories.names[static_cast<std::size_t>(f)].size())
             : 1;
  return w;
}

std::vector<int> TableEncoding::embedding_rows() const {
  std::vector<int> rows;
  for (int f : embedded) rows.push_back(static_cast<int>(categories.names[static_cast<std::size_t>(f)].size()) + 1);
  return rows;
}

std::string TableEncoding::to_json() const {
  json_text::Json j;
  j["header"] = header;
  j["columns"] = columns;
  j["features"] = cols;
  j["label_column"] = label_column;
  j["label"] = label;
  json_text::Json cats = json_text::Json::array();
  for (long long f = 0; f < cols; ++f)
    cats.push_back(categories.of(static_cast<int>(f))
                       ? json_text::Json(categories.names[static_cast<std::size_t>(f)])
                       : json_text::Json(nullptr));
  j["categories"] = cats;
  j["classes"] = classes;
  if (!embedded.empty()) j["embedded"] = embedded;
  return j.dump();
}

TableEncoding TableEncoding::from_json(const std::string& text, const std::string& origin) {
  TableEncoding e;
  try {
    const json_text::Json j = json_text::Json::parse(text);
    e.header = j.at("header").get<bool>();
    e.columns = j.at("columns").get<std::vector<std::string>>();
    e.cols = j.at("features").get<long long>();
    e.label_column = j.at("label_column").get<int>();
    e.label = j.at("label").get<std::string>();
    e.classes = j.at("classes").get<std::vector<std::string>>();
    const json_text::Json& cats = j.at("categories");
    if (!cats.is_array() || static_cast<long long>(cats.size()) != e.cols)
      throw Error("'categories' does not list the " + std::to_string(e.cols) + " features");
    e.categories.is.assign(static_cast<std::size_t>(e.cols), 0);
    e.categories.names.resize(static_cast<std::size_t>(e.cols));
    for (std::size_t f = 0; f < cats.size(); ++f) {
      if (cats[f].is_null()) continue;
      e.categories.is[f] = 1;
      e.categories.names[f] = cats[f].get<std::vector<std::string>>();
    }
    if (!e.categories.any()) e.categories = gbdt::Categories{};
    if (j.contains("embedded")) e.embedded = j.at("embedded").get<std::vector<int>>();  // older files: none
    for (std::size_t i = 0; i < e.embedded.size(); ++i)
      if (!e.categories.of(e.embedded[i]) || (i > 0 && e.embedded[i] <= e.embedded[i - 1]))
        throw Error("'embedded' lists " + std::to_string(e.embedded[i]) + ", not an ascending categorical feature");
  } catch (const std::exception& ex) {
    throw Error(origin + ": not a table encoding: " + ex.what(), ExitCode::bad_input);
  }
  return e;
}

namespace {

// "column 'cut'" (a header) or "column 3" (the file's 0-based column).
std::string column_text(const TableEncoding& e, long long f) {
  if (static_cast<std::size_t>(f) < e.columns.size())
    return "column '" + e.columns[static_cast<std::size_t>(f)] + "'";
  return "column " + std::to_string(f + (e.label_column >= 0 && f >= e.label_column ? 1 : 0));
}
std::string label_text(const TableEncoding& e) { return gbdt::label_column_text(e.label, e.label_column); }

// The file's columns against the encoding it must follow (the training data's, the model's).
void check_columns(const TableEncoding& given, const io::TextLayout& t, const std::string& whose) {
  if (t.cols != given.cols)
    input_error(t.file, 0, "",
                "has " + std::to_string(t.cols) + " feature columns, " + whose + " has " +
                    std::to_string(given.cols));
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

TableEncoding agree_table_encoding(const TextTableDataset& table, const TableEncodingOptions& o,
                                   const TableEncoding* given, const Comm& comm) {
  const io::TextLayout& t = table.layout();
  const bool labelled = t.opt.label_column >= 0;
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
    io::read_text_rows(t, ids.data(), n, x.data(), labelled ? y.data() : nullptr, &strings);
    for (std::size_t r = 0; r < n; ++r) line[r] = t.line[static_cast<std::size_t>(first) + r];
    if (!given)
      declared = gbdt::declared_categorical(o.categorical_columns, t.names, t.cols, t.opt.label_column, t.file);
  });
  TableEncoding e;
  e.header = t.opt.header;
  e.columns = t.names;
  e.cols = t.cols;
  e.label_column = t.opt.label_column;
  e.label = t.label_name;
  e.categories = gbdt::agree_categories({&x, rows, t.cols, &strings, &t.names, &line, t.file}, declared,
                                        given ? &given->categories : nullptr, o.whose, comm);
  if (!given)
    comm.run_agreed([&] {
      std::string summary;
      for (long long f = 0; f < t.cols; ++f) {
        if (!e.categories.of(static_cast<int>(f))) continue;
        const auto count = static_cast<long long>(e.categories.names[static_cast<std::size_t>(f)].size());
        if (o.embedding_dim > 0 && count > o.onehot_max) {  // Note [category embeddings]
          if (count > kMaxEmbeddedCategories)
            input_error(t.file, 0, "category_embedding",
                        column_text(e, f) + " has " + std::to_string(count) + " categories, more than the " +
                            std::to_string(kMaxEmbeddedCategories) + " an embedding's float codes can hold");
          e.embedded.push_back(static_cast<int>(f));
          summary += (summary.empty() ? "" : ", ") + column_text(e, f) + " (" + std::to_string(count + 1) + " x " +
                     std::to_string(o.embedding_dim) + ")";
        } else if (count > o.max_categories) {
          input_error(t.file, 0, "max_categories",
                      column_text(e, f) + " has " + std::to_string(count) +
                          " categories, more than max_categories " + std::to_string(o.max_categories) +
                          " (one input each): raise it, drop the column or give it an embedding "
                          "(category_embedding)");
        }
      }
      if (!summary.empty() && comm.rank() == 0) Log::info(t.file + ": embedded: " + summary);
    });
  if (!strings.keep_label) return given ? *given : e;
  // Text labels are categories too (Note [text labels]); only their check matters with `given`.
  std::vector<float> codes = y;
  const std::vector<std::string> classes = gbdt::agree_classes({&codes, rows, &strings,
                                                                static_cast<std::size_t>(t.cols), t.label_name,
                                                                t.opt.label_column, &line, t.file},
                                                               given ? &given->classes : nullptr, o.whose, comm);
  if (given) return *given;
  e.classes = classes;
  return e;
}

namespace {

// Note [table inputs]: rows parsed with their text and written as the encoding's inputs.
class EncodedTable : public Dataset {
 public:
  EncodedTable(std::shared_ptr<const TextTableDataset> table, const TableEncoding& e)
      : table_(std::move(table)), e_(e), width_(e.width()), classes_(code_map(e.classes)) {
    const long long cols = e_.cols;
    offset_.resize(static_cast<std::size_t>(cols));
    codes_.resize(static_cast<std::size_t>(cols));
    long long at = 0;
    for (long long f = 0; f < cols; ++f) {
      const auto u = static_cast<std::size_t>(f);
      const bool cat = e_.categories.of(static_cast<int>(f));
      if (cat) codes_[u] = code_map(e_.categories.names[u]);
      if (e_.is_embedded(f)) continue;  // after the others (Note [category embeddings])
      offset_[u] = at;
      const std::string name = column_name(f);
      if (!cat) names_.push_back(name);
      else
        for (const std::string& c : e_.categories.names[u]) names_.push_back(name + "=" + c);
      at += cat ? static_cast<long long>(e_.categories.names[u].size()) : 1;
    }
    for (int f : e_.embedded) {
      offset_[static_cast<std::size_t>(f)] = at++;
      names_.push_back(column_name(f) + " (code)");
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
  std::string describe_row(std::uint64_t row, int field) const override { return table_->describe_row(row, field); }
  std::vector<std::string> value_names(int field) const override {
    return field == 0 ? names_ : table_->value_names(field);
  }
  long long file_line(std::uint64_t row) const override { return table_->file_line(row); }

 private:
  bool labelled() const { return table_->layout().opt.label_column >= 0; }
  std::string column_name(long long f) const {
    const auto u = static_cast<std::size_t>(f);
    return u < e_.columns.size() ? e_.columns[u] : "x" + std::to_string(f);
  }
  int code(const std::unordered_map<std::string, int>& m, const std::string& name) const {
    const auto it = m.find(name);
    return it == m.end() ? -1 : it->second;
  }

  std::shared_ptr<const TextTableDataset> table_;
  TableEncoding e_;
  long long width_;
  std::vector<long long> offset_;                            // per column: its first input
  std::vector<std::unordered_map<std::string, int>> codes_;  // per categorical column: name -> code
  std::unordered_map<std::string, int> classes_;             // class name -> index
  std::vector<std::string> names_;                           // the inputs: "carat", "cut=Ideal", ...
};

long long EncodedTable::read_rows(const std::vector<std::uint64_t>& rows,
                                  const std::vector<FieldBuffer>& out) const {
  const io::TextLayout& t = table_->layout();
  const std::size_t n = rows.size(), cols = static_cast<std::size_t>(t.cols), w = static_cast<std::size_t>(width_);
  std::vector<float> x(n * cols), y(labelled() ? n : 0);
  io::TextStrings s;
  s.keep_label = labelled() && !e_.classes.empty();
  io::read_text_rows(t, rows.data(), n, x.data(), labelled() ? y.data() : nullptr, &s);
  auto* in = static_cast<float*>(out.at(0).values);
  std::fill(in, in + n * w, 0.0f);
  const auto line = [&](std::size_t r) { return t.line[rows[r]]; };
  for (std::size_t f = 0; f < cols; ++f) {
    const auto off = static_cast<std::size_t>(offset_[f]);
    if (!e_.categories.of(static_cast<int>(f))) {
      if (!s.cells[f].empty()) {  // a file checked by agree_table_encoding has none
        const auto& [row, id] = s.cells[f].front();
        input_error(t.file, line(row), "",
                    column_text(e_, static_cast<long long>(f)) + " holds '" + s.dict[f][id] +
                        "', not a number, but the model reads it as numbers");
      }
      for (std::size_t r = 0; r < n; ++r) in[r * w + off] = x[r * cols + f];
      continue;
    }
    // One-hot: a 1 at the code's input. Embedded: the code itself, the missing row K for a missing
    // or unseen category (Note [category embeddings]).
    const bool embedded = e_.is_embedded(static_cast<long long>(f));
    const int missing = static_cast<int>(e_.categories.names[f].size());
    const auto put = [&](std::size_t r, int c) {
      if (embedded) in[r * w + off] = static_cast<float>(c >= 0 ? c : missing);
      else if (c >= 0) in[r * w + off + static_cast<std::size_t>(c)] = 1.0f;
    };
    for (std::size_t r = 0; r < n; ++r) {  // numbers name categories by their decimal form
      const float v = x[r * cols + f];
      put(r, std::isnan(v) ? -1 : code(codes_[f], gbdt::category_of_number(v)));
    }
    std::vector<int> dict_code(s.dict[f].size());
    for (std::size_t j = 0; j < dict_code.size(); ++j) dict_code[j] = code(codes_[f], s.dict[f][j]);
    for (const auto& [row, id] : s.cells[f]) put(row, dict_code[id]);
  }
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

std::shared_ptr<const Dataset> encoded_table(std::shared_ptr<const TextTableDataset> table,
                                             const TableEncoding& encoding) {
  return std::make_shared<EncodedTable>(std::move(table), encoding);
}

std::optional<TableEncoding> encode_table_data(const deck::Deck& deck, std::shared_ptr<const Dataset>& data,
                                               std::shared_ptr<const Dataset>& validation, const Comm& comm) {
  const auto table = std::dynamic_pointer_cast<const TextTableDataset>(data);
  if (!table || table->layout().opt.format == io::TextFormat::libsvm) return std::nullopt;
  const auto key = [&](const char* name) { return deck.schema().find(name) ? deck.get_string(name) : ""; };
  TableEncodingOptions o;
  o.categorical_columns = key("categorical_columns");
  o.max_categories = deck.schema().find("max_categories") ? deck.get_int("max_categories") : 1000;
  o.text_labels = key("loss") == "cross_entropy";
  if (deck.schema().find("category_embedding")) {
    o.embedding_dim = deck.get_int("category_embedding");
    o.onehot_max = deck.get_int("onehot_max_categories");
    // Only the mlp looks the codes up; another network would read them as numbers.
    if (o.embedding_dim > 0 && key("model") != "mlp")
      deck.fail("category_embedding", "embeds table columns for model mlp only, not model " + key("model"));
  }
  const TableEncoding e = agree_table_encoding(*table, o, nullptr, comm);
  if (!e.categorical()) return e;
  data = encoded_table(table, e);
  if (const auto val = std::dynamic_pointer_cast<const TextTableDataset>(validation)) {
    o.whose = "data_file";
    agree_table_encoding(*val, o, &e, comm);
    validation = encoded_table(val, e);
  }
  return e;
}

}  // namespace hpct
