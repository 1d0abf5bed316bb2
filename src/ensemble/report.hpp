// The ensemble's evaluation table: for each member and for the ensemble, the task's metrics on each
// evaluated set (regression: RMSE and MAE; binary: AUC, logloss and accuracy; multiclass: mlogloss
// and accuracy), computed by the GBDT
// metrics (global and exact over ranks), printed by rank 0 and written as CSV.
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "ensemble/member.hpp"
#include "gbdt/booster.hpp"

namespace hpct::ensemble {

std::vector<std::string> metric_names(Task task);  // rmse, mae | auc, logloss, accuracy | mlogloss, accuracy
bool higher_is_better(const std::string& metric);

// Collective: the metrics of one model's scores (binary: probabilities; multiclass: K per row) on
// this rank's rows of d.
std::vector<double> score_metrics(Task task, const std::vector<double>& scores, const gbdt::Data& d,
                                  const Comm& comm);

struct TableRow {
  std::string model;           // "ensemble" or the member's name
  std::string kind;            // "stacking"/"average" or the member's kind
  std::vector<double> values;  // per set, the metrics of metric_names in order
};

struct Table {
  std::vector<std::string> sets;     // "valid", "test"
  std::vector<std::string> metrics;  // metric_names(task)
  std::vector<TableRow> rows;
  std::string text() const;  // aligned columns for the log
  std::string csv() const;   // header "model,kind,valid_auc,..." then one line per row
};

}  // namespace hpct::ensemble
