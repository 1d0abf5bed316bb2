// How a table's columns become a network's inputs: numbers as they are, each categorical column a
// one-hot block or one code for an embedding (Note [category embeddings]), with its JSON form (the
// weights file's "table" attribute). Shared by the CSV/TSV path of training and predict
// (train/table_inputs.hpp) and by ensemble network members, which see the same category codes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/memory_table.hpp"
#include "deck/deck.hpp"
#include "gbdt/categories.hpp"

namespace hpct {

struct TableEncoding {
  bool header = false;               // the file names its columns on its first line
  std::vector<std::string> columns;  // the feature columns' names (header), else empty
  long long cols = 0;                // feature columns of the file
  int label_column = -1;             // the label's file column (-1: none)
  std::string label;                 // its header name, if any
  gbdt::Categories categories;       // per feature column: categorical or not, names by code
  std::vector<std::string> classes;  // text labels: the class names by index; empty: numeric labels
  // The categorical columns read through an embedding, ascending: their codes are the last inputs
  // (Note [category embeddings]); the other categorical columns are one-hot blocks.
  std::vector<int> embedded;

  bool categorical() const { return categories.any() || !classes.empty(); }
  bool is_embedded(long long f) const;
  // Inputs per row: one per numeric column, one per category of each one-hot column, one code per
  // embedded column.
  long long width() const;
  // Per embedded column: its embedding table's rows, its categories + 1 (the missing row).
  std::vector<int> embedding_rows() const;
  // Per column: its first input (one-hot: its block's; embedded: its code's).
  std::vector<long long> offsets() const;
  // Per input: 1 where it is a one-hot entry or an embedded code, 0 for a numeric column's value.
  std::vector<char> unscaled_inputs() const;
  // "column 'cut'" (a header) or "column 3" (the file's 0-based column), for messages.
  std::string column_text(long long f) const;
  // The weights file's "table" attribute (JSON) and back; errors name `origin`.
  std::string to_json() const;
  static TableEncoding from_json(const std::string& text, const std::string& origin);
};

// The deck's choice between one-hot blocks and embeddings (Note [category embeddings]).
struct CategoryInputs {
  long long max_categories = 1000;  // a one-hot column with more categories is an error
  long long embedding_dim = 0;      // category_embedding: > 0 embeds the columns with more than
  long long onehot_max = 0;         // onehot_max_categories categories
};

// The deck's one-hot / embedding keys (max_categories, category_embedding, onehot_max_categories);
// category_embedding for a model other than the mlp is an error at its key.
CategoryInputs category_inputs(const deck::Deck& deck);

// Sets e.embedded by `c`; a one-hot column over max_categories (or an embedded one over what float
// codes hold) is an error naming `file` and the column. Rank 0 logs the embedded columns.
void choose_category_inputs(TableEncoding& e, const CategoryInputs& c, const std::string& file, bool log);

// Rows x [n, e.cols] holding numbers and category codes (NaN: missing, or a category the encoding
// lacks) -> out [n, e.width()], as Note [table inputs] and Note [category embeddings] say.
void encode_coded_rows(const TableEncoding& e, const float* x, std::size_t n, float* out);

// Rows already encoded in memory (an ensemble's network members): the trainer stores `encoding()`
// with the weights and builds the model for its embedded columns, as for a CSV/TSV file.
// Where the rows came from, for a bad value's message: row i is line line[i] of `file` (an HDF5
// file's row + 1, named as row line[i] - 1 of `hdf5_dataset`), a row `whose` ("member m trains on").
struct RowOrigin {
  std::string file, hdf5_dataset, whose;
  std::vector<int> line;
};

class EncodedMemoryTable : public MemoryTable {
 public:
  // x: coded rows [rows, e.cols] (encoded here), y: rows x d_out; `origin` names a row by its file's
  // line and column (empty lines: by its index, MemoryTable's).
  EncodedMemoryTable(std::string name, const std::vector<float>& x, std::vector<float> y, std::uint64_t d_out,
                     TableEncoding e, RowOrigin origin = {});
  const TableEncoding& encoding() const { return e_; }
  // "t.csv:12: column 'b' (a row member m trains on)" (no header: "feature 1"), "t.h5: dataset
  // 'inputs' row 11 (...)".
  std::string describe_row(std::uint64_t row, int field) const override;

 private:
  TableEncoding e_;
  RowOrigin origin_;
};

}  // namespace hpct
