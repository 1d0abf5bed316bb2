// The ensemble's evaluation table (see report.hpp).
#include "ensemble/report.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "ensemble/combiner.hpp"
#include "gbdt/metrics.hpp"

namespace hpct::ensemble {

std::vector<std::string> metric_names(Task task) {
  if (task == Task::binary) return {"auc", "logloss", "accuracy"};
  if (task == Task::multiclass) return {"mlogloss", "accuracy"};
  return {"rmse", "mae"};
}

bool higher_is_better(const std::string& metric) { return metric == "auc" || metric == "accuracy"; }

std::vector<double> score_metrics(Task task, const std::vector<double>& scores, const gbdt::Data& d,
                                  const Comm& comm) {
  // The GBDT metrics read margins: a probability's margin is its logit (clipped at 1e-15, as
  // logloss clips), which gives the same AUC, error and logloss as the probability.
  // Multiclass: the margins are log-probabilities, whose softmax is the probabilities again.
  std::vector<double> margins = scores;
  const gbdt::Objective o = task == Task::binary       ? gbdt::Objective::binary
                            : task == Task::multiclass ? gbdt::Objective::multiclass
                                                       : gbdt::Objective::regression;
  const int K = task == Task::multiclass && d.rows > 0 ? static_cast<int>(scores.size() / d.rows) : 1;
  const int classes = task == Task::multiclass ? comm.max(K) : 1;  // a rank without rows knows it too
  if (task == Task::binary)
    for (double& m : margins) m = logit(m);
  if (task == Task::multiclass)
    for (double& m : margins) m = log_probability(m);
  const std::string error = task == Task::multiclass ? "merror" : "error";
  std::vector<double> v;
  for (const std::string& name : metric_names(task)) {
    if (name == "accuracy") v.push_back(1 - gbdt::evaluate(error, o, classes, margins, d.y, d.w, comm));
    else v.push_back(gbdt::evaluate(name, o, classes, margins, d.y, d.w, comm));
  }
  return v;
}

std::string Table::text() const {
  std::size_t wm = 8, wk = 4;
  for (const TableRow& r : rows) wm = std::max(wm, r.model.size()), wk = std::max(wk, r.kind.size());
  std::string o = strf("%-*s  %-*s", static_cast<int>(wm), "model", static_cast<int>(wk), "kind");
  for (const std::string& s : sets)
    for (const std::string& m : metrics) o += strf("  %12s", (s + " " + m).c_str());
  for (const TableRow& r : rows) {
    o += strf("\n%-*s  %-*s", static_cast<int>(wm), r.model.c_str(), static_cast<int>(wk), r.kind.c_str());
    for (const double x : r.values) o += strf("  %12.6f", x);
  }
  return o;
}

std::string Table::csv() const {
  std::string o = "model,kind";
  for (const std::string& s : sets)
    for (const std::string& m : metrics) o += "," + s + "_" + m;
  o += "\n";
  for (const TableRow& r : rows) {
    o += r.model + "," + r.kind;
    for (const double x : r.values) o += strf(",%.17g", x);
    o += "\n";
  }
  return o;
}

}  // namespace hpct::ensemble
