// predict's refusal of input rows a model was trained refusing (see predict_finite.hpp).
#include "predict_finite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct::tools {

// Note [predict non-finite inputs]: training refuses a NaN or Inf among a model's inputs unless
// the model reads NaN itself (Model::constrain_fields: an mlp trained on a table with
// missing_numbers mean reads it as the column's mean); predict wrote NaN outputs for such rows
// without a word. It applies the same check to the rows read (this rank's block): an error naming
// the file, the first bad row and how many there are, exit 2 on every rank. An ensemble applies
// each network member's rule, as the member's training did (an ensemble trains its deck members on
// its own rows, so its run refused what a member refused): a row one member refuses is refused,
// naming that member; its tree members read NaN as missing and an Inf as a value (the trees' rule
// in predict too), so an ensemble of trees only refuses nothing. The ensemble's rows hold an Inf as
// +-FLT_MAX (gbdt::load_data, for the trees), which a network member refuses as the Inf it was.

namespace {

// Whether `v` is one an input refuses: NaN and Inf, or Inf only where the model reads NaN.
bool refused(float v, bool nan_allowed) { return nan_allowed ? std::isinf(v) : !std::isfinite(v); }

// The same for an ensemble's rows, read by gbdt::load_data, which keeps an Inf as +-FLT_MAX (the
// trees' reading, gbdt/binning.hpp): a network takes that for a number and overflows on it.
bool refused_in_table(float v, bool nan_allowed) {
  return refused(v, nan_allowed) || std::fabs(v) == std::numeric_limits<float>::max();
}

// Whether the model reads NaN in each of its inputs (its constrained field specs).
std::vector<FieldSpec> input_rules(const Model& model, const std::vector<NamedShape>& inputs) {
  std::vector<FieldSpec> specs(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) specs[k].name = inputs[k].name;
  model.constrain_fields(specs);
  return specs;
}

// Collective. This rank found `bad` refused rows, the first at global row `first_bad` (UINT64_MAX:
// none); returns when no rank found one, else agrees on the message the rank holding the first bad
// row makes ("<where> holds <what> (the first of N rows with one): <why>").
void refuse_rows(std::uint64_t bad, std::uint64_t first_bad,
                 const std::function<std::string(unsigned long long total)>& message_of_first, const Comm& comm) {
  const std::uint64_t total_bad = comm.sum(bad), global_first = comm.min(first_bad);
  if (total_bad == 0) return;
  comm.agree(first_bad == global_first ? message_of_first(total_bad) : std::string(), ExitCode::bad_input);
}

// "the first of 3 rows with one", "the only row with one".
std::string count_text(unsigned long long total) {
  return total == 1 ? "the only row with one" : strf("the first of %llu rows with one", total);
}

}  // namespace

void refuse_non_finite(const Model& model, const std::vector<NamedShape>& inputs,
                       const std::vector<std::vector<float>>& x, const std::string& data,
                       const std::vector<std::string>& datasets_in, const Dataset* table, std::uint64_t first,
                       std::uint64_t count, const Comm& comm) {
  const std::vector<FieldSpec> specs = input_rules(model, inputs);
  std::uint64_t bad = 0, first_bad = UINT64_MAX;
  std::size_t field = 0;
  for (std::uint64_t i = 0; i < count; ++i)
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const auto w = static_cast<std::uint64_t>(inputs[k].row_size());
      const float* row = x[k].data() + i * w;
      if (std::none_of(row, row + w, [&](float v) { return refused(v, specs[k].nan_allowed); })) continue;
      if (bad++ == 0) first_bad = first + i, field = k;
      break;
    }
  refuse_rows(
      bad, first_bad,
      [&](unsigned long long total) {
        const std::string where = table ? table->describe_row(first_bad, 0)
                                        : data + ": dataset '" + datasets_in[field] + "' row " +
                                              std::to_string(first_bad);
        return strf(
            "%s holds %s (%s): the %s model was trained refusing them, so its outputs there would be NaN; "
            "leave those rows out",
            where.c_str(), specs[field].nan_allowed ? "an Inf" : "a NaN or Inf", count_text(total).c_str(),
            model.family().c_str());
      },
      comm);
}

void refuse_ensemble_non_finite(const ensemble::Ensemble& e, const gbdt::Data& d, const std::string& hdf5_dataset,
                                const Comm& comm) {
  // Each network member's rule on its one input (ensemble members read one row of features).
  struct Rule {
    const ensemble::Member* member;
    bool nan_allowed;
  };
  std::vector<Rule> rules;
  for (const ensemble::Member& m : e.members)
    if (m.network) rules.push_back({&m, input_rules(*m.network, m.network->predict_inputs()).front().nan_allowed});
  if (rules.empty()) return;  // trees only (every rank read the same file)
  const auto cols = static_cast<std::size_t>(d.cols);
  // The first column of row i member `r` refuses, or cols: a network member with a `table`
  // encoding reads a categorical column's missing code as its own category (encode_coded_rows).
  const auto refused_column = [&](std::size_t i, const Rule& r) {
    for (std::size_t f = 0; f < cols; ++f)
      if (refused_in_table(d.x[i * cols + f], r.nan_allowed) &&
          !(r.member->inputs && r.member->inputs->categories.of(static_cast<int>(f))))
        return f;
    return cols;
  };
  std::uint64_t bad = 0, first_bad = UINT64_MAX;
  std::size_t first_i = 0, first_rule = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(d.rows); ++i)
    for (std::size_t r = 0; r < rules.size(); ++r) {
      if (refused_column(i, rules[r]) == cols) continue;
      if (bad++ == 0) first_bad = static_cast<std::uint64_t>(d.first_row) + i, first_i = i, first_rule = r;
      break;
    }
  refuse_rows(
      bad, first_bad,
      [&](unsigned long long total) {
        const Rule& r = rules[first_rule];
        const std::size_t f = refused_column(first_i, r);
        std::string where;
        if (!hdf5_dataset.empty()) {
          where = d.file + ": dataset '" + hdf5_dataset + "' row " + std::to_string(first_bad);
        } else {
          where = d.file + ":" + std::to_string(first_i < d.line.size() ? d.line[first_i] : 0);
          if (f < d.feature_names.size() && !d.feature_names[f].empty())
            where += ": column '" + d.feature_names[f] + "'";
        }
        return strf(
            "%s holds %s (%s): member %s (%s) of the ensemble was trained refusing them, so the ensemble's "
            "scores there would be NaN; leave those rows out",
            where.c_str(), r.nan_allowed ? "an Inf" : "a NaN or Inf", count_text(total).c_str(),
            r.member->path.c_str(), r.member->kind.c_str());
      },
      comm);
}

}  // namespace hpct::tools
