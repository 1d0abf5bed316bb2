// A data set whose rows carry row weights: a field "weights" [1] float32 (Batch::kWeights) beside
// another data set's fields, from a CSV/TSV weight_column, per-row weights, class weights or 1 (Note
// [network row weights] in train/row_weights.cpp). The loss multiplies each row's loss and gradient by it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/batch.hpp"
#include "data/dataset.hpp"
#include "data/table_dataset.hpp"

namespace hpct {

// The name of the weights field (Batch::field, Dataset::fields).
inline constexpr const char* kRowWeightsField = Batch::kWeights;

// Whether `data` has a weights field.
bool has_row_weights(const Dataset& data);

// `data` with a weights field: row r's weight is `table`'s weight_column value (table not null),
// else file_weights[r] (not empty), else 1.
std::shared_ptr<const Dataset> with_row_weights(std::shared_ptr<const Dataset> data,
                                                std::shared_ptr<const TableDataset> table,
                                                std::vector<float> file_weights);

// `data` whose weights (1 without a weights field) are multiplied by c[class of the row]: the
// targets' class index (cross_entropy), or the 0/1 target (bce, one output). A target that names
// no class is an error naming the file, line and class_weights.
std::shared_ptr<const Dataset> with_class_weights(std::shared_ptr<const Dataset> data, std::vector<float> c);

// Value r of a one-value-per-row field's host buffer (float32, int32 or int64), as a double: a
// row's class.
double target_value(const FieldSpec& spec, const void* values, std::size_t r);

// The data set under the weights of with_row_weights and with_class_weights (`data` itself when
// it has none added): what its source was (an encoded table's encoding).
std::shared_ptr<const Dataset> unweighted(const std::shared_ptr<const Dataset>& data);

}  // namespace hpct
