// predict's refusal of input rows a model was trained refusing (Note [predict non-finite inputs]
// in predict_finite.cpp): a network's rows, and an ensemble's, whose network members keep the rule
// their trainings applied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "ensemble/ensemble_file.hpp"
#include "gbdt/booster.hpp"
#include "models/model.hpp"

namespace hpct::tools {

// Collective. Rows [first, first + count) of this rank, x[k] of `inputs[k]` each: one holding a
// value `model` was trained refusing is an error (exit 2, every rank) naming the first such row
// (`table`'s describe_row, else `data` and the dataset of `datasets_in`) and how many there are.
void refuse_non_finite(const Model& model, const std::vector<NamedShape>& inputs,
                       const std::vector<std::vector<float>>& x, const std::string& data,
                       const std::vector<std::string>& datasets_in, const Dataset* table, std::uint64_t first,
                       std::uint64_t count, const Comm& comm);

// Collective. This rank's rows of `d`, as the ensemble `e` scores them: a row holding a value one
// of its network members was trained refusing is an error (exit 2, every rank) naming the first
// such row (`hdf5_dataset`: the inputs dataset of an HDF5 file, named with the row; empty: a text
// file, named by line and column), the member and the count. Tree members read NaN as missing and
// take an Inf down the tree, as `predict MEMBER.json` does.
void refuse_ensemble_non_finite(const ensemble::Ensemble& e, const gbdt::Data& d, const std::string& hdf5_dataset,
                                const Comm& comm);

}  // namespace hpct::tools
