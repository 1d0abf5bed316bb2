// Evaluation metrics over all ranks' rows: rmse, mae, logloss, error, auc, mlogloss, merror, and the
// log-link objectives' poisson_nloglik, gamma_nloglik, gamma_deviance, tweedie_nloglik (XGBoost's
// poisson-nloglik, gamma-nloglik, gamma-deviance, tweedie-nloglik@r, the same formulas), quantile
// (pinball loss at quantile_alpha) and mphe (mean pseudo-Huber error at huber_slope) as XGBoost's,
// and the ranking metrics ndcg, ndcg@k, map, map@k over query groups (gbdt/rank_objective.hpp).
// Every metric is a global figure computed exactly (fixed-point sums, AUC over the gathered scores),
// so its value, and any early-stopping decision based on it, is the same for every rank count.
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "gbdt/objective.hpp"

namespace hpct::gbdt {

bool metric_known(const std::string& name);
bool metric_fits(const std::string& name, Objective o);  // e.g. auc needs binary
bool metric_higher_is_better(const std::string& name);
// rmse, logloss, mlogloss, poisson_nloglik, gamma_deviance, tweedie_nloglik, mae, quantile, mphe, ndcg@10
std::string default_metric(Objective o);

// `margins` [n, K] of this rank's rows (host, row-major), labels y, weights w (empty: 1); `params`
// give tweedie_nloglik its variance power, quantile its alpha, mphe its slope; `query` the local
// query starts of the ranking metrics (Data::query).
double evaluate(const std::string& metric, Objective o, int num_class, const std::vector<double>& margins,
                const std::vector<float>& y, const std::vector<float>& w, const Comm& comm,
                const ObjectiveParams& params = {}, const std::vector<int>& query = {});

// Weighted area under the ROC curve of local arrays (ties count one half). Exposed for tests.
double auc_local(const std::vector<double>& score, const std::vector<float>& y, const std::vector<float>& w);

}  // namespace hpct::gbdt
