// Row weights for networks (Note [network row weights] in row_weights.cpp): the deck keys that ask
// for them (weight_column, weight_file, validation_weight_file, class_weights), weight files and the
// class weights; the rows carry them as a field (data/weighted_rows.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "data/weighted_rows.hpp"
#include "deck/deck.hpp"

namespace hpct {

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

// Collective. With class_weights: `train` and `validation` weighted by choose_class_weights's
// weights for the loss's classes (a table's text label's, num_classes, bce's 0 and 1).
void weigh_by_class(const deck::Deck& deck, std::shared_ptr<const Dataset>& train,
                    std::shared_ptr<const Dataset>& validation, const std::vector<std::string>& names,
                    const Comm& comm);

// Not collective. `file`'s weights, one number per data line, `rows` of them, each >= 0 and finite:
// else an error naming the file, the line and `key` (weight_file, predict's --weight-file).
std::vector<float> read_weight_file(const std::string& file, std::uint64_t rows, const std::string& key);

// Collective. The row weights of the deck's file under `file_key` (data_file, validation_file):
// its weight file (weight_file, validation_weight_file), one number per data line, each >= 0 and
// finite; empty when the deck names none. `rows`: the file's row count.
std::vector<float> network_weight_file(const deck::Deck& deck, const std::string& file_key, std::uint64_t rows,
                                       const Comm& comm);

// Collective. An error naming the validation rows' weights (validation_weight_file, weight_column,
// weight_file's held-out rows, class_weights) when `total`, the sum of the `rows` validation rows'
// weights, is 0 (Note [zero total weight]); nothing when it is not (or -1: unweighted).
void check_validation_weight_total(const deck::Deck& deck, double total, std::uint64_t rows, const Comm& comm);

// Collective. An error naming the training rows' weights (weight_file, weight_column, class_weights)
// when every rank's `largest` (its largest training row weight; -1: unweighted) is 0 over `rows`
// training rows (Note [zero total weight]). `description`: the rows' name, for rows whose weights
// the deck does not give (an ensemble member's part).
void check_training_weight_total(const deck::Deck& deck, double largest, std::uint64_t rows,
                                 const std::string& description, const Comm& comm);

}  // namespace hpct
