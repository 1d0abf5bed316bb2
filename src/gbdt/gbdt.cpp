// The GBDT deck: its keys and what they mean for the booster and the data sources (the run itself
// is train/gbdt_run.cpp, on the networks' run machinery).
#include "gbdt/gbdt.hpp"

#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/metrics.hpp"

namespace hpct::gbdt {

void declare_keys(deck::Schema& s) {
  s.section(kFamilyName);
  // data_format and the text tables' keys (label_column, text_header, ...) are declared with the
  // data sources (data/source_registry.cpp): hdf5, csv, tsv, libsvm.
  s.add_string("weight_file", "",
               "row weights of data_file, one number per line; empty: unit weights, or the CSV/TSV weight_column");
  s.add_string("validation_weight_file", "",
               "row weights of validation_file, one number per line (its metrics and early stopping weigh "
               "rows as LightGBM's); empty: unit weights, or validation_file's weight_column");
  s.add_string("test_file", "", "data evaluated with the final model (same format); empty: none");
  s.add_string("test_weight_file", "", "row weights of test_file, one number per line; empty: unit weights");
  s.add_string("importance_file", "",
               "feature importance written here: tab-separated feature, splits, gain, cover (as XGBoost's "
               "get_score); empty: none");
  s.add_choice("objective", "regression",
               {"regression", "squared_error", "binary", "multiclass", "poisson", "gamma", "tweedie",
                "absolute_error", "quantile", "pseudo_huber", "lambdarank", "rank_ndcg"},
               "loss: squared error, binary logistic (labels 0/1), multiclass softmax (labels 0..num_class-1); "
               "log link, predictions e^margin: poisson (counts >= 0), gamma (amounts > 0), tweedie (amounts >= 0 "
               "with many zeros); absolute_error (median), quantile (quantile_alpha), pseudo_huber (huber_slope); "
               "as XGBoost and LightGBM define them; lambdarank (alias rank_ndcg): LambdaMART over query groups, "
               "labels 0..30, predictions scores (docs/ranking.md)");
  s.add_real("poisson_max_delta_step", 0.7, 0.0, 100.0,
             "poisson: the hessian is e^(margin + this), damping the first steps (XGBoost's max_delta_step, "
             "LightGBM's poisson_max_delta_step)");
  s.add_real("tweedie_variance_power", 1.5, 1.0, 2.0,
             "tweedie: the power r of Var(y) = phi mu^r, 1 < r < 2 (near 1: Poisson-like, near 2: gamma-like)");
  s.add_real("lambdarank_sigma", 1.0, 1e-6, 1e6, "lambdarank: the sigmoid's scale (LightGBM's sigmoid)");
  s.add_int("lambdarank_truncation", 30, 1, 10000,
            "lambdarank: pairs need one row ranked above this (LightGBM's lambdarank_truncation_level)");
  s.add_bool("lambdarank_norm", true, "lambdarank: LightGBM's normalisation of each query's lambdas");
  s.add_string("label_gain", "",
               "lambdarank and ndcg: the gain of each relevance grade 0, 1, ..., comma-separated (LightGBM's "
               "label_gain); empty: 2^label - 1 for the grades 0 to 30");
  s.add_string("group_file", "",
               "ranking: data_file's query sizes, one count per line (LightGBM's .query file; default: "
               "<data_file>.query when it exists, as for validation_file and test_file)");
  s.add_real("quantile_alpha", 0.5, 0.0, 1.0,
             "quantile: the quantile predicted, 0 < alpha < 1 (XGBoost's quantile_alpha, LightGBM's alpha)");
  s.add_real("huber_slope", 1.0, 0.0, 1e30,
             "pseudo_huber: d > 0 of d^2 (sqrt(1 + (r/d)^2) - 1), quadratic for |r| << d, linear beyond");
  s.add_int("num_class", 0, 0, 1 << 16, "multiclass: number of classes (0: highest label + 1)");
  s.add_int("num_trees", 100, 1, 1 << 24, "boosting rounds (trees per output)");
  s.add_real("eta", 0.1, 0.0, 1e3, "learning rate (shrinkage of every leaf value)");
  s.add_choice("growth", "depthwise", {"depthwise", "leafwise"},
               "depthwise: level by level to max_depth; leafwise: best leaf first up to max_leaves");
  s.add_int("max_depth", 6, 0, 30, "maximum tree depth (0: unlimited, leafwise only)");
  s.add_int("max_leaves", 0, 0, 1 << 20, "maximum leaves per tree (0: unlimited, depthwise only)");
  s.add_int("max_bin", 255, 2, 255, "value bins per feature (NaN gets one more)");
  s.add_int("bin_sample_rows", 200000, 1000, 1ll << 40, "rows sampled (by global index) to place the bin cuts");
  s.add_real("lambda_l2", 1.0, 0.0, 1e12, "L2 regularisation of leaf values");
  s.add_real("alpha_l1", 0.0, 0.0, 1e12, "L1 regularisation of leaf values");
  s.add_real("min_split_gain", 0.0, 0.0, 1e30, "a split must reduce the loss by more than this (gamma)");
  s.add_real("min_child_weight", 1.0, 0.0, 1e30, "minimum hessian sum in each child");
  s.add_int("min_data_in_leaf", 0, 0, 1ll << 40, "minimum rows in each child");
  s.add_string("categorical_columns", "",
               "features read as categories besides the text columns (which always are): comma-separated header "
               "names or 0-based file column indices (docs/tables.md)");
  s.add_int("max_cat_to_onehot", 4, 1, 1 << 20,
            "categorical: a feature with fewer categories than this splits one category against the rest");
  s.add_real("cat_smooth", 10.0, 0.0, 1e12,
             "categorical: categories are sorted by G / (H + cat_smooth); those with fewer rows stay right");
  s.add_real("cat_l2", 10.0, 0.0, 1e12, "categorical: L2 added to lambda_l2 in many-category splits");
  s.add_int("max_cat_threshold", 32, 1, 255, "categorical: at most this many categories sent left by a split");
  s.add_int("min_data_per_group", 100, 1, 1ll << 40,
            "categorical: minimum rows on each side of a many-category split");
  s.add_bool("quantized_gradients", false,
             "8-byte histogram bins: gradients and hessians at about 10 bits, row counts estimated from "
             "hessians (faster; below 2^24 rows, else ignored)");
  s.add_real("subsample", 1.0, 1e-6, 1.0, "fraction of rows used by each round (bagging)");
  s.add_real("colsample", 1.0, 1e-6, 1.0, "fraction of features each tree may split on");
  s.add_string("base_score", "auto",
               "initial prediction: auto (mean, log-odds or class priors of the data) or a number "
               "(a probability for binary)");
  s.add_string("eval_metric", "",
               "metrics, comma-separated: rmse mae logloss error auc mlogloss merror poisson_nloglik gamma_nloglik "
               "gamma_deviance tweedie_nloglik quantile mphe ndcg ndcg@k map map@k (empty: the objective's)");
  s.add_int("early_stopping_rounds", 0, 0, 1 << 24,
            "stop when the first metric on the validation set has not improved for this many rounds (0: off)");
  s.add_int("checkpoint_every_trees", 0, 0, 1 << 24,
            "checkpoint every N boosting rounds into checkpoint_dir (0: off; checkpoint_every_minutes, "
            "checkpoint_keep, resume and stop signals apply as for networks)");
}

namespace {

// label_gain's comma-separated numbers (checked for >= 0 by objective_param_error); "" gives none.
std::vector<double> parse_label_gain(const deck::Deck& d) {
  const std::string& text = d.get_string("label_gain");
  std::vector<double> gains;
  if (text.find_first_not_of(" \t") == std::string::npos) return gains;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || std::string(end).find_first_not_of(" \t") != std::string::npos)
      d.fail("label_gain", "'" + item + "' (entry " + std::to_string(gains.size()) + ") is not a number");
    gains.push_back(v);
    if (comma == std::string::npos) return gains;
    at = comma + 1;
  }
}

}  // namespace

BoostParams params_from_deck(const deck::Deck& d) {
  BoostParams p;
  p.objective = parse_objective(d.get_string("objective"));
  p.objective_params.poisson_max_delta_step = d.get_real("poisson_max_delta_step");
  p.objective_params.tweedie_variance_power = d.get_real("tweedie_variance_power");
  p.objective_params.lambdarank_sigma = d.get_real("lambdarank_sigma");
  p.objective_params.lambdarank_truncation = static_cast<int>(d.get_int("lambdarank_truncation"));
  p.objective_params.lambdarank_norm = d.get_bool("lambdarank_norm");
  p.objective_params.label_gain = parse_label_gain(d);
  p.objective_params.quantile_alpha = d.get_real("quantile_alpha");
  p.objective_params.huber_slope = d.get_real("huber_slope");
  const auto bad = objective_param_error(p.objective, p.objective_params);
  if (!bad.first.empty()) d.fail(bad.first, bad.second);
  p.num_class = static_cast<int>(d.get_int("num_class"));
  if (p.objective != Objective::multiclass) p.num_class = 1;
  else if (d.is_set("num_class") && p.num_class < 2) d.fail("num_class", "multiclass needs at least 2 classes");
  p.num_trees = static_cast<int>(d.get_int("num_trees"));
  p.grow.eta = d.get_real("eta");
  p.grow.leafwise = d.get_string("growth") == "leafwise";
  p.grow.max_depth = static_cast<int>(d.get_int("max_depth"));
  p.grow.max_leaves = static_cast<int>(d.get_int("max_leaves"));
  if (!p.grow.leafwise && p.grow.max_depth == 0) d.fail("max_depth", "depthwise growth needs max_depth >= 1");
  if (p.grow.leafwise && p.grow.max_leaves == 0 && p.grow.max_depth == 0)
    d.fail("max_leaves", "leafwise growth needs max_leaves or max_depth");
  if (p.grow.leafwise && p.grow.max_leaves == 1) d.fail("max_leaves", "a tree needs at least 2 leaves");
  p.grow.split.lambda = d.get_real("lambda_l2");
  p.grow.split.alpha = d.get_real("alpha_l1");
  p.grow.split.min_split_gain = d.get_real("min_split_gain");
  p.grow.split.min_child_weight = d.get_real("min_child_weight");
  p.grow.split.min_data_in_leaf = d.get_int("min_data_in_leaf");
  p.grow.split.max_cat_to_onehot = static_cast<int>(d.get_int("max_cat_to_onehot"));
  p.grow.split.cat_smooth = d.get_real("cat_smooth");
  p.grow.split.cat_l2 = d.get_real("cat_l2");
  p.grow.split.max_cat_threshold = static_cast<int>(d.get_int("max_cat_threshold"));
  p.grow.split.min_data_per_group = d.get_int("min_data_per_group");
  p.quantized_gradients = d.get_bool("quantized_gradients");
  p.max_bin = static_cast<int>(d.get_int("max_bin"));
  p.bin_sample_rows = d.get_int("bin_sample_rows");
  p.subsample = d.get_real("subsample");
  p.colsample = d.get_real("colsample");
  p.seed = static_cast<std::uint64_t>(d.get_int("seed"));
  const std::string bs = d.get_string("base_score");
  p.base_score_auto = bs == "auto";
  if (!p.base_score_auto) {
    char* end = nullptr;
    p.base_score = std::strtod(bs.c_str(), &end);
    if (bs.empty() || *end != '\0' || !std::isfinite(p.base_score))
      d.fail("base_score", "expected auto or a number");
    if (p.objective == Objective::binary && !(p.base_score > 0 && p.base_score < 1))
      d.fail("base_score", "the binary objective needs a probability in (0, 1)");
    if (log_link(p.objective) && !(p.base_score > 0))
      d.fail("base_score", "the " + objective_name(p.objective) + " objective needs a mean > 0");
  }
  for (const auto& m : deck::split_list(d.get_string("eval_metric"))) {
    if (!metric_known(m)) d.fail("eval_metric", "unknown metric '" + clip_for_log(m) + "'");
    if (!metric_fits(m, p.objective))
      d.fail("eval_metric", "metric '" + clip_for_log(m) + "' does not apply to the " +
                                objective_name(p.objective) + " objective");
    p.metrics.push_back(m);
  }
  p.early_stopping_rounds = static_cast<int>(d.get_int("early_stopping_rounds"));
  return p;
}

}  // namespace hpct::gbdt
