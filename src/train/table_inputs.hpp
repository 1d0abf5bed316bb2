// A CSV/TSV/Parquet table (data/table_dataset.hpp) as a network's inputs (gbdt/table_encoding.hpp): numeric columns as they are, each
// categorical column a one-hot block or a code for an embedding, a text label column class indices;
// the dictionaries agreed over ranks by the trees' coder (gbdt/categories.hpp) and stored with the
// weights (Note [table inputs]).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "data/text_table.hpp"
#include "deck/deck.hpp"
#include "gbdt/table_encoding.hpp"

namespace hpct {

struct TableEncodingOptions {
  std::string categorical_columns;  // the deck key: integer-coded columns that are categories too
  CategoryInputs inputs;            // one-hot blocks or embeddings (Note [category embeddings])
  bool text_labels = false;         // the loss takes classes (cross_entropy): a text label is a class name
  std::string whose = "data_file";  // for messages: who fixed `given` ("data_file", "the model")
};

// Collective. Reads this rank's block of `table`'s rows and agrees the encoding over the ranks (Note
// [category codes]); with `given` (the training data's or a model's) checks the file against it:
// text in a column it reads as numbers and a class it does not know are errors naming file, line
// and column, a category it does not know is an input block of zeros (embedded: the missing row).
TableEncoding agree_table_encoding(const TableDataset& table, const TableEncodingOptions& options,
                                   const TableEncoding* given, const Comm& comm);

// `table` read through `encoding`: inputs float32 [width()], targets float32 [1] (numeric labels)
// or int32 [1] class indices in [0, classes) (text labels).
std::shared_ptr<const Dataset> encoded_table(std::shared_ptr<const TableDataset> table,
                                             const TableEncoding& encoding);

// Collective. Network training: rows already encoded in memory (EncodedMemoryTable) return their
// encoding; when `data` is a CSV/TSV table, agrees its encoding (the deck's
// categorical_columns and max_categories; text labels for loss cross_entropy), checks `validation`
// (a validation_file's table, or null) against it and, where a column or the label is categorical,
// replaces both by their encoded reading. Returns the encoding (its JSON goes into the weights
// file); none when `data` is not a CSV/TSV table. A LibSVM `data` and `validation` are replaced by
// their network reading (network_libsvm_reading: absent entries 0 unless libsvm_absent says).
std::optional<TableEncoding> encode_table_data(const deck::Deck& deck, std::shared_ptr<const Dataset>& data,
                                               std::shared_ptr<const Dataset>& validation, const Comm& comm);

}  // namespace hpct
