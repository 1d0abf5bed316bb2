// Text readers for tabular data (CSV, TSV, LibSVM): each rank parses only its own contiguous block
// of data lines; every problem is an hpct::Error (bad_input) naming file:line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hpct::io {

struct CompressedText;  // compressed_input.hpp

enum class TextFormat { csv, tsv, libsvm };

struct TextOptions {
  TextFormat format = TextFormat::csv;
  int label_column = 0;  // CSV/TSV: 0-based column holding the label; -1: no label column
  // CSV/TSV with a header: the column of this name holds the label (overrides label_column).
  std::string label_name;
  bool header = false;  // CSV/TSV: the first non-empty line names the columns and is skipped
  int libsvm_base = 1;  // LibSVM: feature ids start at 0 or 1
  // LibSVM: an absent entry is 0 (LightGBM's reading) instead of missing (XGBoost's, the default);
  // a written `nan` stays missing either way (Note [absent LibSVM entries] in libsvm_line.cpp).
  bool absent_zero = false;
  // LibSVM: the feature count the caller expects (e.g. the model's); -1: whatever the block shows.
  // CSV/TSV: checked against the file's column count when >= 0.
  long long num_features = -1;
  // Infinite values (inf, 1e999) are read as +-inf instead of being an error: scoring a model, where
  // the trees send them one way (LightGBM does the same); training data refuses them, as XGBoost does.
  bool allow_infinite = false;
  // CSV/TSV: 0-based column holding the query id of a ranking table (not a feature); -1: none.
  // group_name (a header name) overrides it. LibSVM takes XGBoost's "qid:N" token instead.
  int group_column = -1;
  std::string group_name;
  // CSV/TSV: 0-based column holding each row's weight (not a feature; LightGBM's weight_column);
  // -1: none. weight_name (a header name) overrides it.
  int weight_column = -1;
  std::string weight_name;
};

// LibSVM rows are held dense (rows x features floats, as the binning reads them), so a feature id
// past this limit (2^24, 16.7M features) is an error naming the file, line and id, not an allocation
// that fails.
constexpr long long kMaxLibsvmFeatures = 1ll << 24;

// One rank's block of rows. Missing values (empty field, NA, nan, absent LibSVM entry unless
// absent_zero) are NaN.
struct Table {
  std::string file;
  long long global_rows = 0;  // data lines in the whole file
  long long first_row = 0;    // global index of this block's first row
  long long rows = 0;         // rows in this block
  long long cols = 0;         // features (as TextLayout::cols)
  std::vector<float> x;       // rows x cols, row-major
  std::vector<float> y;       // labels (empty when label_column == -1)
  std::vector<int> line;      // 1-based line number in `file` of every row, for error messages
};

// A text table as one pass over the file finds it (Note [streaming text]): where each data row
// starts, its line, the feature count and the header's names. Rows are then parsed on demand.
struct TextLayout {
  std::string file;
  TextOptions opt;                    // label_column resolved from label_name
  long long rows = 0;                 // data rows (header excluded)
  long long cols = 0;                 // features (LibSVM: highest id over the file + 1 - base, or num_features)
  std::vector<std::string> names;     // CSV/TSV with a header: the feature columns' names; else empty
  std::string label_name;             // the label column's header name, if any
  std::vector<std::uint64_t> offset;  // byte offset of every data row in the file
  std::vector<int> line;              // 1-based line of every data row
  // Ranking tables (group_column, or LibSVM qid: tokens): the first row of every query, then rows;
  // empty without query ids. The scan checks that each query's rows are contiguous.
  std::vector<long long> query_start;
  // A compressed file (gzip, zstd, bzip2, xz): its restart points and the reader reads continue
  // (Note [compressed text] in compressed_input.cpp); null for a plain file.
  std::shared_ptr<CompressedText> compressed;
};

// One pass over the file; checks the header against the first data row and the label column.
TextLayout scan_text(const std::string& path, const TextOptions& opt);

// CSV/TSV feature fields that are not numbers, kept (as categories) instead of refused.
struct TextStrings {
  std::vector<std::vector<std::string>> dict;  // per feature: the distinct strings, first seen first
  // per feature: (row i of the read, index into dict) of every such field; x holds NaN there
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> cells;
  // Set before the read: a label that is not a number is kept too, as entry [cols] of dict and
  // cells (class names), y holding NaN there, instead of being an error.
  bool keep_label = false;
};

// Parses the data rows `rows[0..n)` (ascending) into x [n, cols] and, with a label column, y [n].
// Errors name the file, line, field and column. With `strings`, a CSV/TSV feature field that is
// not a number goes there instead of being an error. With a weight column, `w` [n] (when not null)
// gets the weights; a missing, negative or non-finite one is an error naming weight_column. CSV/TSV
// with x and y null and w given: the weights alone (the other fields split, not parsed).
void read_text_rows(const TextLayout& t, const std::uint64_t* rows, std::size_t n, float* x, float* y,
                    TextStrings* strings = nullptr, float* w = nullptr);

// "csv", "tsv", "libsvm" from a file name's extension (.csv, .tsv/.txt/.train/.test, .svm/.libsvm),
// a compressor's after it skipped (higgs.csv.gz: csv). Returns false when the extension says nothing.
bool format_from_extension(const std::string& path, TextFormat& out);

// Rows [rank * N / size, (rank + 1) * N / size) of the file's data lines (blank lines and lines
// starting with '#' are not data). Not collective: callers agree on errors.
Table read_text_block(const std::string& path, const TextOptions& opt, int rank, int size);

// One number per data line (weights, as LightGBM's *.weight files); returns lines
// [first, first + count) and checks that the file has exactly `expected_total` lines. With
// `weight_key` (weight_file, ...) each value is a row weight: a negative or infinite one is an
// error naming the file, its line and the key.
std::vector<float> read_column_block(const std::string& path, long long first, long long count,
                                     long long expected_total, const std::string& weight_key = "");

}  // namespace hpct::io
