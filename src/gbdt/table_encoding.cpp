// Table columns as network inputs: the encoding's sizes, JSON and the one-hot / embedding choice
// (see table_encoding.hpp).
#include "gbdt/table_encoding.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/log.hpp"

namespace hpct {

// Note [category embeddings]
// A one-hot block costs one input (and one column of the first layer's weights) per category and
// says nothing shared between categories; a column of zip codes or product ids has thousands of them.
// With `category_embedding D` > 0, each categorical column of more than `onehot_max_categories`
// categories is instead one input holding its row's code, which the mlp looks up in the column's own
// table of K + 1 learned rows of D values (nn/layers/category_embeddings.hpp), as an nn.Embedding per
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

std::vector<long long> TableEncoding::offsets() const {
  std::vector<long long> at(static_cast<std::size_t>(cols));
  long long next = 0;
  for (long long f = 0; f < cols; ++f) {
    if (is_embedded(f)) continue;  // after the others
    at[static_cast<std::size_t>(f)] = next;
    next += categories.of(static_cast<int>(f))
                ? static_cast<long long>(categories.names[static_cast<std::size_t>(f)].size())
                : 1;
  }
  for (int f : embedded) at[static_cast<std::size_t>(f)] = next++;
  return at;
}

std::vector<char> TableEncoding::unscaled_inputs() const {
  std::vector<char> out(static_cast<std::size_t>(width()), 1);
  const std::vector<long long> at = offsets();
  for (long long f = 0; f < cols; ++f)
    if (!categories.of(static_cast<int>(f))) out[static_cast<std::size_t>(at[static_cast<std::size_t>(f)])] = 0;
  return out;
}

std::string TableEncoding::column_text(long long f) const {
  if (static_cast<std::size_t>(f) < columns.size()) return "column '" + columns[static_cast<std::size_t>(f)] + "'";
  return "column " + std::to_string(f + (label_column >= 0 && f >= label_column ? 1 : 0));
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

CategoryInputs category_inputs(const deck::Deck& deck) {
  CategoryInputs c;
  if (deck.schema().find("max_categories")) c.max_categories = deck.get_int("max_categories");
  if (!deck.schema().find("category_embedding")) return c;
  c.embedding_dim = deck.get_int("category_embedding");
  c.onehot_max = deck.get_int("onehot_max_categories");
  // Only the mlp looks the codes up; another network would read them as numbers.
  const std::string model = deck.get_string("model");
  if (c.embedding_dim > 0 && model != "mlp")
    deck.fail("category_embedding", "embeds table columns for model mlp only, not model " + model);
  return c;
}

void choose_category_inputs(TableEncoding& e, const CategoryInputs& c, const std::string& file, bool log) {
  e.embedded.clear();
  std::string summary;
  for (long long f = 0; f < e.cols; ++f) {
    if (!e.categories.of(static_cast<int>(f))) continue;
    const auto count = static_cast<long long>(e.categories.names[static_cast<std::size_t>(f)].size());
    if (c.embedding_dim > 0 && count > c.onehot_max) {
      if (count > kMaxEmbeddedCategories)
        input_error(file, 0, "category_embedding",
                    e.column_text(f) + " has " + std::to_string(count) + " categories, more than the " +
                        std::to_string(kMaxEmbeddedCategories) + " an embedding's float codes can hold");
      e.embedded.push_back(static_cast<int>(f));
      summary += (summary.empty() ? "" : ", ") + e.column_text(f) + " (" + std::to_string(count + 1) + " x " +
                 std::to_string(c.embedding_dim) + ")";
    } else if (count > c.max_categories) {
      input_error(file, 0, "max_categories",
                  e.column_text(f) + " has " + std::to_string(count) + " categories, more than max_categories " +
                      std::to_string(c.max_categories) +
                      " (one input each): raise it, drop the column or give it an embedding (category_embedding)");
    }
  }
  if (!summary.empty() && log) Log::info(file + ": embedded: " + summary);
}

void encode_coded_rows(const TableEncoding& e, const float* x, std::size_t n, float* out) {
  const auto cols = static_cast<std::size_t>(e.cols), w = static_cast<std::size_t>(e.width());
  const std::vector<long long> at = e.offsets();
  std::fill(out, out + n * w, 0.0f);
  for (std::size_t f = 0; f < cols; ++f) {
    const auto off = static_cast<std::size_t>(at[f]);
    const bool cat = e.categories.of(static_cast<int>(f)),
               embedded = cat && e.is_embedded(static_cast<long long>(f));
    const float missing = cat ? static_cast<float>(e.categories.names[f].size()) : 0.0f;
    for (std::size_t r = 0; r < n; ++r) {
      const float v = x[r * cols + f];
      if (!cat) out[r * w + off] = v;
      else if (embedded) out[r * w + off] = std::isnan(v) || v < 0 || v >= missing ? missing : v;
      else if (!std::isnan(v) && v >= 0 && v < missing) out[r * w + off + static_cast<std::size_t>(v)] = 1.0f;
    }
  }
}

namespace {
std::vector<float> encoded(const std::vector<float>& x, const TableEncoding& e) {
  const std::size_t n = e.cols > 0 ? x.size() / static_cast<std::size_t>(e.cols) : 0;
  std::vector<float> out(n * static_cast<std::size_t>(e.width()));
  encode_coded_rows(e, x.data(), n, out.data());
  return out;
}
}  // namespace

EncodedMemoryTable::EncodedMemoryTable(std::string name, const std::vector<float>& x, std::vector<float> y,
                                       std::uint64_t d_out, TableEncoding e, RowOrigin origin)
    : MemoryTable(std::move(name), encoded(x, e), std::move(y), static_cast<std::uint64_t>(e.width()), d_out),
      e_(std::move(e)),
      origin_(std::move(origin)) {}

std::string EncodedMemoryTable::describe_row(std::uint64_t row, int field) const {
  if (row >= origin_.line.size()) return MemoryTable::describe_row(row, field);
  const int line = origin_.line[row];
  const std::string whose = " (a row " + origin_.whose + ")";
  if (!origin_.hdf5_dataset.empty())
    return origin_.file + ": dataset '" + (field == 0 ? origin_.hdf5_dataset : std::string("targets")) + "' row " +
           std::to_string(line - 1) + whose;
  const std::string where = origin_.file + ":" + std::to_string(line) + ": ";
  if (field != 0) return where + "label" + whose;
  // The first numeric column whose input is not finite (a category's inputs always are).
  const float* in = input_row(row);
  const std::vector<long long> at = e_.offsets();
  for (long long f = 0; f < e_.cols; ++f) {
    if (e_.categories.of(static_cast<int>(f)) || std::isfinite(in[at[static_cast<std::size_t>(f)]])) continue;
    const auto u = static_cast<std::size_t>(f);
    return where +
           (u < e_.columns.size() && !e_.columns[u].empty() ? "column '" + e_.columns[u] + "'"
                                                            : "feature " + std::to_string(f)) +
           whose;
  }
  return where + "inputs" + whose;
}

}  // namespace hpct
