// A CSV/TSV table as a network's inputs: numeric columns as they are, each categorical column a
// one-hot block or a code for an embedding (Note [category embeddings]), a text label column class
// indices; the dictionaries agreed over ranks by the trees' coder (gbdt/categories.hpp) and stored
// with the weights (Note [table inputs]).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "data/text_table.hpp"
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
  // The weights file's "table" attribute (JSON) and back; errors name `origin`.
  std::string to_json() const;
  static TableEncoding from_json(const std::string& text, const std::string& origin);
};

struct TableEncodingOptions {
  std::string categorical_columns;  // the deck key: integer-coded columns that are categories too
  long long max_categories = 0;     // a one-hot column with more categories is an error
  long long embedding_dim = 0;      // category_embedding: > 0 embeds the columns with more than
  long long onehot_max = 0;         // onehot_max_categories categories
  bool text_labels = false;         // the loss takes classes (cross_entropy): a text label is a class name
  std::string whose = "data_file";  // for messages: who fixed `given` ("data_file", "the model")
};

// Collective. Reads this rank's block of `table`'s rows and agrees the encoding over the ranks (Note
// [category codes]); with `given` (the training data's or a model's) checks the file against it:
// text in a column it reads as numbers and a class it does not know are errors naming file, line
// and column, a category it does not know is an input block of zeros.
TableEncoding agree_table_encoding(const TextTableDataset& table, const TableEncodingOptions& options,
                                   const TableEncoding* given, const Comm& comm);

// `table` read through `encoding`: inputs float32 [width()], targets float32 [1] (numeric labels)
// or int32 [1] class indices in [0, classes) (text labels).
std::shared_ptr<const Dataset> encoded_table(std::shared_ptr<const TextTableDataset> table,
                                             const TableEncoding& encoding);

// Collective. Network training: when `data` is a CSV/TSV table, agrees its encoding (the deck's
// categorical_columns and max_categories; text labels for loss cross_entropy), checks `validation`
// (a validation_file's table, or null) against it and, where a column or the label is categorical,
// replaces both by their encoded reading. Returns the encoding (its JSON goes into the weights
// file); none when `data` is not a CSV/TSV table.
std::optional<TableEncoding> encode_table_data(const deck::Deck& deck, std::shared_ptr<const Dataset>& data,
                                               std::shared_ptr<const Dataset>& validation, const Comm& comm);

}  // namespace hpct
