// Row weights for networks (Note [network row weights] in row_weights.cpp): a data set whose rows
// carry a "weights" field [1] float32, from a CSV/TSV weight_column, a weight file, the deck's
// class_weights, or 1; the loss multiplies each row's loss and gradient by it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/batch.hpp"
#include "data/dataset.hpp"
#include "data/text_table.hpp"
#include "deck/deck.hpp"

namespace hpct {

// The name of the weights field (Batch::field, Dataset::fields).
inline constexpr const char* kRowWeightsField = Batch::kWeights;

// Whether `data` has a weights field.
bool has_row_weights(const Dataset& data);

// `data` (a text table or its encoded reading) with a weights field: row r's weight is `table`'s
// weight_column value (table not null), else file_weights[r] (not empty), else 1.
std::shared_ptr<const Dataset> with_row_weights(std::shared_ptr<const Dataset> data,
                                                std::shared_ptr<const TextTableDataset> table,
                                                std::vector<float> file_weights);

// `data` whose weights (1 without a weights field) are multiplied by c[class of the row]: the
// targets' class index (cross_entropy), or the 0/1 target (bce, one output). A target that names
// no class is an error naming the file, line and class_weights.
std::shared_ptr<const Dataset> with_class_weights(std::shared_ptr<const Dataset> data, std::vector<float> c);

// The deck keys: class_weights.
void declare_row_weight_keys(deck::Schema& s);

// Whether the deck weighs a network's rows (weight_column, weight_file, validation_weight_file,
// class_weights): the key that does, or "".
std::string row_weight_key(const deck::Deck& deck);

// Collective. The class weights the deck's class_weights asks for over `classes` classes (balanced:
// n / (classes x count_k), counted over `train` by every rank's block), logged with `names` (the
// class names of a table's text labels; empty: the indices). Empty when class_weights is unset.
std::vector<float> choose_class_weights(const deck::Deck& deck, const Dataset& train, int classes,
                                        const std::vector<std::string>& names, const Comm& comm);

// Collective. The row weights of the deck's file under `file_key` (data_file, validation_file):
// its weight file (weight_file, validation_weight_file), one number per data line, each >= 0 and
// finite; empty when the deck names none. `rows`: the file's row count.
std::vector<float> network_weight_file(const deck::Deck& deck, const std::string& file_key, std::uint64_t rows,
                                       const Comm& comm);

}  // namespace hpct
