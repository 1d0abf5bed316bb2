// The scan of a text table (CSV, TSV, LibSVM): the one pass over the file that finds where each data
// row starts (Note [streaming text]), the header's columns and the label, query id and weight columns,
// the LibSVM width and the queries; the rows are parsed later (text_rows.cpp).
#include "io/text_tables.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "io/libsvm_line.hpp"
#include "io/text_lines.hpp"

namespace hpct::io {
namespace {

// The column a key (label_column, group_column, weight_column) names by its header name.
int named_column(const TextLayout& t, const std::vector<std::string>& header, int header_line, const char* key,
                 const std::string& name) {
  if (header.empty())
    input_error(t.file, 0, key, "'" + name + "' names a column, but the file has no header (text_header)");
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) {
    std::string fields;  // what the header does hold: a ';'-delimited file is one field
    for (const std::string& h : header) fields += (fields.empty() ? "'" : ", '") + h + "'";
    const bool one_field = header.size() == 1 && header[0].find_first_of(";|\t,") != std::string::npos;
    input_error(t.file, header_line, key,
                "no column named '" + name + "' in the header (" + std::to_string(header.size()) +
                    (header.size() == 1 ? " field: " : " fields: ") + clip_for_log(fields, 160) + ")" +
                    (one_field ? "; data_format csv splits at ',', tsv at tabs: is it delimited otherwise?" : ""));
  }
  const auto again = std::find(it + 1, header.end(), name);  // pandas reads them as 'x', 'x.1'
  if (again != header.end())
    input_error(t.file, header_line, key,
                "'" + name + "' names two columns of the header (fields " +
                    std::to_string(it - header.begin() + 1) + " and " + std::to_string(again - header.begin() + 1) +
                    "): rename one");
  return static_cast<int>(it - header.begin());
}

// CSV/TSV: the header's names, the first data row's field count, the label column.
void delimited_columns(const std::vector<std::string>& header, int header_line, const Line& first, TextLayout& t) {
  const char delim = t.opt.format == TextFormat::csv ? ',' : '\t';
  const std::size_t ncols = count_fields(first, delim, t.file);
  if (!header.empty() && header.size() != ncols)
    input_error(t.file, first.number, "",
                "the header names " + std::to_string(header.size()) + " columns, the first data row has " +
                    std::to_string(ncols) + " fields");
  if (!t.opt.label_name.empty())
    t.opt.label_column = named_column(t, header, header_line, "label_column", t.opt.label_name);
  if (!t.opt.group_name.empty())
    t.opt.group_column = named_column(t, header, header_line, "group_column", t.opt.group_name);
  if (!t.opt.weight_name.empty())
    t.opt.weight_column = named_column(t, header, header_line, "weight_column", t.opt.weight_name);
  const long long label = t.opt.label_column, group = t.opt.group_column, weight = t.opt.weight_column;
  if (label >= static_cast<long long>(ncols))
    input_error(t.file, first.number, "label_column",
                "column " + std::to_string(label) + " does not exist (the line has " + std::to_string(ncols) +
                    " fields)");
  if (group >= static_cast<long long>(ncols) || (group >= 0 && group == label))
    input_error(t.file, first.number, "group_column",
                group == label ? "the query id column is the label column"
                               : "column " + std::to_string(group) + " does not exist (the line has " +
                                     std::to_string(ncols) + " fields)");
  if (weight >= static_cast<long long>(ncols) || (weight >= 0 && (weight == label || weight == group)))
    input_error(t.file, first.number, "weight_column",
                weight == label   ? "the weight column is the label column"
                : weight == group ? "the weight column is the query id column (group_column)"
                                  : "column " + std::to_string(weight) + " does not exist (the line has " +
                                        std::to_string(ncols) + " fields)");
  t.cols = static_cast<long long>(ncols) - (label >= 0 ? 1 : 0) - (group >= 0 ? 1 : 0) - (weight >= 0 ? 1 : 0);
  for (std::size_t k = 0; k < header.size(); ++k)
    if (static_cast<long long>(k) == label) t.label_name = header[k];
    else if (static_cast<long long>(k) != group && static_cast<long long>(k) != weight)
      t.names.push_back(header[k]);
  // pandas' to_csv writes the row index as a first column with an empty name unless index=False:
  // a feature of row numbers (a leak where rows are sorted by label). Read as the file says, named.
  if (!header.empty() && header[0].empty() && label != 0 && group != 0 && weight != 0)
    Log::info(t.file +
              ": note: column 1 has no header name (pandas' index, from to_csv without "
              "index=False?); it is read as a feature");
  if (t.opt.num_features >= 0 && t.opt.num_features != t.cols)
    input_error(t.file, first.number, "",
                "has " + std::to_string(t.cols) + " features, expected " + std::to_string(t.opt.num_features));
}

// The query id of a data line: CSV/TSV the group column's field, LibSVM a "qid:N" token after the
// label. False when the line has none (LibSVM without qid, or no group column).
bool query_id(const TextLayout& t, const Line& l, std::string& id) {
  if (t.opt.format == TextFormat::libsvm) {
    const char* p = l.begin;
    while (p < l.end && *p != ' ' && *p != '\t') ++p;  // the label
    while (p < l.end && (*p == ' ' || *p == '\t')) ++p;
    if (l.end - p < 4 || std::strncmp(p, "qid:", 4) != 0) return false;
    const char* e = p + 4;
    while (e < l.end && *e != ' ' && *e != '\t') ++e;
    id.assign(p + 4, e);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
      input_error(t.file, l.number, "", "query id '" + std::string(p, e) + "' is not qid:<non-negative integer>");
    return true;
  }
  if (t.opt.group_column < 0) return false;
  const std::vector<std::string> f = split_fields(l, t.opt.format == TextFormat::csv ? ',' : '\t', t.file);
  const auto g = static_cast<std::size_t>(t.opt.group_column);
  id = g < f.size() ? trim(f[g].data(), f[g].data() + f[g].size()) : std::string();
  if (id.empty() || is_missing(id))
    input_error(t.file, l.number, "group_column", "field " + std::to_string(g + 1) + ": missing query id");
  return true;
}

// Note [contiguous queries]: the rows of one query must follow each other (LightGBM's and XGBoost's
// layout): a query is then a row range, and ranks can split the rows between queries. A query id
// met again after another query is an error naming both lines, not a silent second query.
struct QueryScan {
  std::string last;
  std::unordered_map<std::string, int> seen;  // id -> its first line
  bool any = false;
  void add(const TextLayout& t, const Line& l, bool has, const std::string& id, std::vector<long long>& start) {
    const long long row = static_cast<long long>(t.offset.size()) - 1;
    if (row == 0) any = has;
    if (has != any)
      input_error(t.file, l.number, "",
                  any ? "line has no query id (qid:) while the lines before have one"
                      : "query id (qid:) on this line but not on line " + std::to_string(t.line.front()));
    if (!has || (row > 0 && id == last)) return;
    const auto [it, fresh] = seen.emplace(id, l.number);
    if (!fresh)
      input_error(t.file, l.number, t.opt.format == TextFormat::libsvm ? "" : "group_column",
                  "query " + id + " again after other queries (it began on line " + std::to_string(it->second) +
                      "; the rows of a query must be contiguous)");
    start.push_back(row);
    last = id;
  }
};

}  // namespace

bool format_from_extension(const std::string& path, TextFormat& out) {
  const std::string name = without_compression_extension(path);
  const auto dot = name.find_last_of('.');
  if (dot == std::string::npos || name.find('/', dot) != std::string::npos) return false;
  const std::string ext = name.substr(dot + 1);
  if (ext == "csv") out = TextFormat::csv;
  else if (ext == "tsv" || ext == "train" || ext == "test") out = TextFormat::tsv;
  else if (ext == "svm" || ext == "libsvm") out = TextFormat::libsvm;
  else return false;
  return true;
}

TextLayout scan_text(const std::string& path, const TextOptions& opt) {
  TextLayout t;
  t.file = path;
  t.opt = opt;
  auto compressed = std::make_shared<CompressedText>();
  DataLines lines(path, compressed.get());
  Line l{};
  const bool delimited = opt.format != TextFormat::libsvm;
  std::vector<std::string> header;
  int header_line = 0;
  if (delimited && opt.header && lines.next(l)) {
    header = split_fields(l, opt.format == TextFormat::csv ? ',' : '\t', path);
    header_line = l.number;
    for (std::size_t k = 0; k < header.size(); ++k)  // Note [text in UTF-8]
      require_utf8(path, header_line, "header field " + std::to_string(k + 1), header[k].data(),
                   header[k].data() + header[k].size());
  }
  long long max_col = -1;
  QueryScan queries;
  std::string id;
  while (lines.next(l)) {
    t.offset.push_back(lines.offset());
    t.line.push_back(l.number);
    if (t.offset.size() == 1 && delimited) delimited_columns(header, header_line, l, t);
    if (!delimited && opt.num_features < 0) max_col = std::max(max_col, parse_libsvm(t, l, nullptr, nullptr));
    queries.add(t, l, query_id(t, l, id), id, t.query_start);
  }
  t.rows = static_cast<long long>(t.offset.size());
  if (t.rows == 0) input_error(path, 0, "", "no data lines");
  if (!t.query_start.empty()) t.query_start.push_back(t.rows);
  if (!delimited) t.cols = opt.num_features >= 0 ? opt.num_features : max_col + 1;
  if (compressed->kind != Compression::none) t.compressed = std::move(compressed);
  return t;
}

}  // namespace hpct::io
