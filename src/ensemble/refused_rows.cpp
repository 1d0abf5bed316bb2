// The rows an ensemble's network members were trained refusing (see refused_rows.hpp).
#include "ensemble/refused_rows.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/log.hpp"

namespace hpct::ensemble {

// Note [member non-finite inputs]
// A network member's training refused a NaN among its inputs unless it reads it as a missing number
// (an mlp of missing_numbers mean), and an Inf always (Model::constrain_fields, the trainer's check
// of its rows); scoring such a row gives NaN, which reached the combiner's fit, the evaluation table
// and predict's output without a word. So the ensemble's run refuses such a row of any set a
// member scores (a file member's training part, every member's held-out and test rows), and
// `predict ENSEMBLE` each row of its data (apps/predict.cpp; a single network's rule: Note
// [predict non-finite inputs] in apps/predict_finite.cpp), naming the first row, the count, the
// split and the member. Tree members read a NaN as missing and
// an Inf as a value (gbdt::load_data keeps it as +-FLT_MAX, the trees' reading), so an ensemble of
// trees refuses neither; to a network that +-FLT_MAX is a number it overflows on, so it counts as
// the Inf it was (a deck member's training rows get it back as Inf: rows_in_memory).
std::size_t refused_column(const Member& m, const float* row, std::size_t cols) {
  if (!m.network) return cols;
  for (std::size_t f = 0; f < cols; ++f) {
    const float v = row[f];
    const bool inf = std::isinf(v) || std::fabs(v) == std::numeric_limits<float>::max();
    if (!(inf || (std::isnan(v) && !m.reads_nan))) continue;
    if (m.inputs && m.inputs->categories.of(static_cast<int>(f))) continue;  // a missing category
    return f;
  }
  return cols;
}

void refuse_member_rows(const std::vector<const Member*>& members, const gbdt::Data& d,
                        const std::string& hdf5_dataset, const std::string& part, const Comm& comm) {
  const auto cols = static_cast<std::size_t>(d.cols);
  std::uint64_t bad = 0, first = UINT64_MAX;
  std::size_t first_i = 0;
  const Member* by = nullptr;
  for (std::size_t i = 0; i < static_cast<std::size_t>(d.rows); ++i)
    for (const Member* m : members) {
      if (refused_column(*m, d.x.data() + i * cols, cols) == cols) continue;
      if (bad++ == 0) first = static_cast<std::uint64_t>(d.first_row) + i, first_i = i, by = m;
      break;
    }
  comm.agree_on_rows(bad, first, [&](unsigned long long total) {
    const std::size_t f = refused_column(*by, d.x.data() + first_i * cols, cols);
    std::string where;
    if (!hdf5_dataset.empty()) {
      where = d.file + ": dataset '" + hdf5_dataset + "' row " + std::to_string(first);
    } else {
      where = d.file + ":" + std::to_string(first_i < d.line.size() ? d.line[first_i] : 0);
      if (f < d.feature_names.size() && !d.feature_names[f].empty())
        where += ": column '" + d.feature_names[f] + "'";
    }
    std::string count = total == 1 ? "the only row with one" : strf("the first of %llu rows with one", total);
    if (!part.empty()) count += ", in " + part;
    return strf(
        "%s holds %s (%s): member %s (%s) of the ensemble was trained refusing them, so its scores there "
        "would be NaN; leave those rows out",
        where.c_str(), by->reads_nan ? "an Inf" : "a NaN or Inf", count.c_str(), by->path.c_str(),
        by->kind.c_str());
  });
}

}  // namespace hpct::ensemble
