// predict's refusal of a network's input rows it was trained refusing (Note [predict non-finite
// inputs] in predict_finite.cpp); an ensemble's rows: ensemble/refused_rows.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "models/model.hpp"

namespace hpct::tools {

// Collective. Rows [first, first + count) of this rank, x[k] of `inputs[k]` each: one holding a
// value `model` was trained refusing is an error (exit 2, every rank) naming the first such row
// (`table`'s describe_row, else `data` and the dataset of `datasets_in`) and how many there are.
// `table_rows`, where given, maps a row here to `table`'s (image files in name order, ImageRows).
void refuse_non_finite(const Model& model, const std::vector<NamedShape>& inputs,
                       const std::vector<std::vector<float>>& x, const std::string& data,
                       const std::vector<std::string>& datasets_in, const Dataset* table, std::uint64_t first,
                       std::uint64_t count, const Comm& comm,
                       const std::vector<std::uint64_t>* table_rows = nullptr);

}  // namespace hpct::tools
