// predict's refusal of a network's input rows it was trained refusing (see predict_finite.hpp).
#include "predict_finite.hpp"

#include <algorithm>
#include <cmath>

#include "core/log.hpp"

namespace hpct::tools {

// Note [predict non-finite inputs]: training refuses a NaN or Inf among a model's inputs unless
// the model reads NaN itself (Model::constrain_fields: an mlp trained on a table with
// missing_numbers mean reads it as the column's mean); predict wrote NaN outputs for such rows
// without a word. It applies the same check to the rows read (this rank's [first, first + count)):
// an error naming the file, the first bad row and how many there are, exit 2 on every rank
// (Comm::agree_on_rows). `predict ENSEMBLE` applies each network member's rule alike (Note [member
// non-finite inputs] in ensemble/refused_rows.cpp).
void refuse_non_finite(const Model& model, const std::vector<NamedShape>& inputs,
                       const std::vector<std::vector<float>>& x, const std::string& data,
                       const std::vector<std::string>& datasets_in, const Dataset* table, std::uint64_t first,
                       std::uint64_t count, const Comm& comm, const std::vector<std::uint64_t>* table_rows) {
  std::vector<FieldSpec> specs(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) specs[k].name = inputs[k].name;
  model.constrain_fields(specs);
  std::uint64_t bad = 0, first_bad = UINT64_MAX;
  std::size_t field = 0;
  for (std::uint64_t i = 0; i < count; ++i)
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const auto w = static_cast<std::uint64_t>(inputs[k].row_size());
      const float* row = x[k].data() + i * w;
      if (std::none_of(row, row + w,
                       [&](float v) { return specs[k].nan_allowed ? std::isinf(v) : !std::isfinite(v); }))
        continue;
      if (bad++ == 0) first_bad = first + i, field = k;
      break;
    }
  comm.agree_on_rows(bad, first_bad, [&](unsigned long long total) {
    const std::string where = table ? table->describe_row(table_rows ? (*table_rows)[first_bad] : first_bad, 0)
                                    : data + ": dataset '" + datasets_in[field] + "' row " +
                                          std::to_string(first_bad);
    const std::string rows = total == 1 ? "the only row with one" : strf("the first of %llu rows with one", total);
    return strf(
        "%s holds %s (%s): the %s model was trained refusing them, so its outputs there would be NaN; "
        "leave those rows out",
        where.c_str(), specs[field].nan_allowed ? "an Inf" : "a NaN or Inf", rows.c_str(), model.family().c_str());
  });
}

}  // namespace hpct::tools
