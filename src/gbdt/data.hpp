// Loading one rank's block of a table for the GBDT trainer, through the data-source registry
// (data/source_registry.hpp: hdf5, csv, tsv, libsvm, ...): the same Dataset networks read. Errors
// on any rank become the same error on every rank.
#pragma once

#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "deck/deck.hpp"
#include "gbdt/booster.hpp"

namespace hpct::gbdt {

// A classifier's CSV/TSV label column may hold class names (Note [text labels]).
struct TextLabels {
  bool allowed = false;                             // a text label is a class name (the objective classifies)
  const std::vector<std::string>* given = nullptr;  // the training data's or the model's classes: the
                                                    // labels must be among them (empty: numeric labels)
};

// Collective. Opens the file of deck key `file_key` with the source data_format names and reads
// this rank's contiguous block of rows (see docs/gbdt.md). Row weights: the CSV/TSV weight_column,
// or the file's weights key (data_file: weight_file, validation_file: validation_weight_file,
// test_file: test_weight_file), not both (Note [weight files] in data.cpp).
// `num_features` >= 0: the width the data must have (a LibSVM file with fewer ids is padded).
// Categorical features (docs/tables.md): text columns and the deck's categorical_columns, or with
// `given` (the training data's or the model's, named by `whose`) those and their category codes.
// Text labels (`labels`): Data::classes and y the class indices. Query groups (docs/ranking.md):
// the text table's query ids, else data_file's group_file, else a LightGBM "<file>.query" beside
// the file; rows are then split between ranks on query boundaries (Note [queries on ranks]).
Data load_data(const deck::Deck& deck, const std::string& file_key, const std::string& name, const Comm& comm,
               long long num_features = -1, const Categories* given = nullptr,
               const std::string& whose = "data_file", const TextLabels& labels = {});

// Collective. The same from an open data set (fields inputs [F] and, labelled, targets [1]);
// `categorical_columns` as the deck key; `query_start` the global query starts (then rows), empty:
// no groups.
Data read_data(const Dataset& ds, const std::string& name, const Comm& comm, long long num_features = -1,
               const Categories* given = nullptr, const std::string& whose = "data_file",
               const std::string& categorical_columns = "", const TextLabels& labels = {},
               const std::vector<long long>& query_start = {});

// Both named (a header): throws naming the first feature column of `d` whose name is not the one in
// `names` (`whose`: "the model", "data_file"). Unnamed data or names are not checked.
void check_column_names(const std::vector<std::string>& names, const Data& d, const std::string& whose);

// Collective. Rows weighted (d.w, from `key` of `file`) all 0 are an error naming file and key
// (Note [zero total weight] in train/row_weights.cpp); `rows` says which rows ("its 40 rows").
void check_weight_total(const Data& d, const std::string& file, const std::string& key, const std::string& rows,
                        const Comm& comm);

// Moves the global rows [cut, global_rows) of `d` into a new data set (the validation hold-out).
// Not collective: every rank knows the global layout.
Data split_tail(Data& d, long long cut, const std::string& name);

// Which split each data set is, for a bad label's message (check_labels' `part`), as the network
// trainer says it: "the training split: the first 36 rows of data_file" and "the validation split:
// the last 4 rows of data_file, validation_fraction 0.1" for a held-out tail, or data_file and
// validation_file; "the test split: test_file". Empty for a set without a held-out partner.
struct SplitNames {
  std::string train, valid, test;
};
SplitNames split_names(const deck::Deck& deck, const Data& train, const Data* valid);

}  // namespace hpct::gbdt
