// Boosting loop and evaluation.
#include "gbdt/booster.hpp"

#include "gbdt/packed.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "core/timer.hpp"
#include "core/trace.hpp"
#include "gbdt/metrics.hpp"
#include "gbdt/rank_objective.hpp"
#include "gbdt/renew.hpp"

namespace hpct::gbdt {

namespace {
constexpr std::uint64_t kBagStream = 0x6261675full;  // "bag_"
constexpr std::uint64_t kColStream = 0x636f6c5full;  // "col_"

template <class T>
View1<T> to_device(const std::vector<T>& v, const char* name) {
  View1<T> d(std::string(name), v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

View2<double> base_margins(long long n, const std::vector<double>& base) {
  View2<double> m("gbdt::margin", static_cast<std::size_t>(n), base.size());
  auto h = Kokkos::create_mirror_view(m);
  for (long long i = 0; i < n; ++i)
    for (std::size_t k = 0; k < base.size(); ++k) h(i, k) = base[k];
  Kokkos::deep_copy(m, h);
  return m;
}

std::vector<double> host_margins(const View2<double>& m) {
  auto h = to_host(m);
  return std::vector<double>(h.data(), h.data() + h.size());
}

// Features of one tree: the ceil(colsample * F) with the smallest hash of (seed, round, feature).
std::vector<char> sample_features(int F, double colsample, std::uint64_t seed, int round) {
  std::vector<char> allowed(static_cast<std::size_t>(F), 1);
  if (colsample >= 1.0) return allowed;
  const int keep = std::max(1, static_cast<int>(std::ceil(colsample * F - 1e-9)));
  std::vector<std::pair<std::uint64_t, int>> key;
  for (int f = 0; f < F; ++f)
    key.push_back({rng::hash(seed, kColStream, static_cast<std::uint64_t>(round), static_cast<std::uint64_t>(f)),
                   f});
  std::sort(key.begin(), key.end());
  std::fill(allowed.begin(), allowed.end(), 0);
  for (int i = 0; i < keep; ++i) allowed[static_cast<std::size_t>(key[static_cast<std::size_t>(i)].second)] = 1;
  return allowed;
}

}  // namespace

std::vector<EvalResult> evaluate_model(const Model& m, const std::vector<std::string>& metrics, const Data& d,
                                       const Comm& comm) {
  const auto margins = predict_margins(m, d.x, d.rows);
  std::vector<EvalResult> out;
  for (const auto& name : metrics)
    out.push_back({d.name + "-" + name,
                   evaluate(name, m.objective, m.num_class, margins, d.y, d.w, comm, m.objective_params, d.query)});
  return out;
}

namespace {

// Note [bagging kernel]: a free function, so the device lambda captures only these values (never
// a Booster's `this`, which lives in host memory).
void bag_rows(const View1<int>& in_bag, double rate, std::uint64_t seed, long long first, int round) {
  const auto r64 = static_cast<std::uint64_t>(round);
  Kokkos::parallel_for(
      "gbdt::bagging", hpct::range(0, static_cast<int>(in_bag.extent(0))), KOKKOS_LAMBDA(const int i) {
        in_bag(i) = rng::uniform(rng::hash(seed, kBagStream, r64, static_cast<std::uint64_t>(first + i))) < rate;
      });
}

}  // namespace

// Everything a boosting run holds between rounds (see Booster).
struct Booster::State {
  State(const BoostParams& params, const Data& train, std::vector<float>* release,
        const std::vector<const Data*>& eval_sets, const Comm& c, RoundCallback callback, const BoostResume* resume)
      : p(params), tr(train), evals(eval_sets), comm(c), cb(std::move(callback)) {
    Model& model = res.model;
    model.objective = p.objective;
    model.objective_params = p.objective_params;
    model.num_class = p.objective == Objective::multiclass ? p.num_class : 1;
    model.num_features = static_cast<int>(tr.cols);
    model.feature_names = tr.feature_names;
    model.categories = tr.categories;
    model.classes = tr.classes;
    K = model.num_outputs();
    metrics = p.metrics.empty() ? std::vector<std::string>{default_metric(p.objective)} : p.metrics;
    if (resume) model.base_margin = resume->base_margin;
    else
      model.base_margin = p.base_score_auto ? base_margins_from_data(p.objective, model.num_class, tr.y, tr.w, comm,
                                                                     p.objective_params)
                                            : base_margins_from_value(p.objective, model.num_class, p.base_score);

    cuts = [&] {  // a trace phase of its own (the global quantiles: an all-gather)
      trace::Scope t("binning");
      BinCuts c = compute_cuts(tr.x, tr.rows, static_cast<int>(tr.cols), tr.first_row, tr.global_rows, p.max_bin,
                               p.bin_sample_rows, p.seed, comm);
      if (tr.categories.any()) set_categorical(c, tr.categories.counts(static_cast<int>(tr.cols)), p.max_bin);
      return c;
    }();
    bins = [&] {
      trace::Scope t("binning");
      return bin_matrix(cuts, tr.x, tr.rows);
    }();
    for (const Data* e : evals) {
      eval_bins.push_back(bin_matrix(cuts, e->x, e->rows));
      eval_margin.push_back(base_margins(e->rows, model.base_margin));
    }
    if (release) std::vector<float>().swap(*release);  // from here on only the bins
    y = to_device(tr.y, "gbdt::y");
    w = to_device(tr.w, "gbdt::w");
    margin = base_margins(tr.rows, model.base_margin);
    columns = transpose_bins(bins);
    hb = std::make_unique<HistogramBuilder>(bins, columns, cuts.offset);
    n = static_cast<std::size_t>(tr.rows);
    // Note [packed binary gradients] (gbdt/objective.hpp): the gradient pass packs the rows itself,
    // with scales fixed by the largest weight over all ranks.
    double max_w = tr.w.empty() ? 1.0 : 0.0;
    for (const float v : tr.w) max_w = std::fmax(max_w, std::fabs(static_cast<double>(v)));
    packed_gradients = p.quantized_gradients && packed_fits(tr.global_rows) &&
                       fixed_gradient_bounds(p.objective, comm.max(max_w), bound_g, bound_h);
    // Every output's gradients in one array [K, n] (multiclass fills them in one pass); g[k] views row k.
    g_all = View2<double>("gbdt::g", K, packed_gradients ? 0 : n);
    h_all = View2<double>("gbdt::h", K, packed_gradients ? 0 : n);
    for (int k = 0; k < K; ++k) {
      g.emplace_back(Kokkos::subview(g_all, k, Kokkos::ALL));
      h.emplace_back(Kokkos::subview(h_all, k, Kokkos::ALL));
    }
    in_bag = View1<int>("gbdt::in_bag", p.subsample < 1.0 ? n : 0);  // unused without bagging
    part = std::make_unique<RowPartition>(tr.rows);
    // The collectives of tree building are watched, as a network step's are: a rank frozen or dead
    // while the others wait in them is named and the job aborted (comm/watchdog.hpp).
    watched = std::make_unique<WatchedAllreduce>(comm, p.watchdog_timeout);
    watched->describe("the tree-building all-reduce of round");
    maxima.resize(2 * static_cast<std::size_t>(K));
    if (resume) {
      // Note [gbdt resume]: the margins are the base margins plus every tree's leaf values added in
      // training order. add_tree_trained adds the same leaf value to a row as walking the tree on
      // its bins (the partition follows the same bin rule), so replaying the trees with
      // add_tree_binned rebuilds the margins bitwise, on any rank count (rows are keyed globally).
      for (std::size_t i = 0; i < resume->trees.size(); ++i) {
        const int k = resume->tree_output[i];
        add_tree_binned(resume->trees[i], cuts, bins, margin, k);
        for (std::size_t e = 0; e < evals.size(); ++e)
          add_tree_binned(resume->trees[i], cuts, eval_bins[e], eval_margin[e], k);
      }
      model.trees = resume->trees;
      model.tree_output = resume->tree_output;
      round = resume->rounds;
      res.best_round = resume->best_round;
      best = resume->best;
    }
  }

  void grow_round();
  // Note [leaf renewal] (gbdt/renew.hpp): t's leaves become eta times the quantile of their in-bag
  // rows' residuals, from the margins before t.
  void renew(Tree& t) {
    trace::Scope s("leaf_renewal");
    renew_leaves(t, leaves_trained(t, *part, columns), host_margins(margin), tr.y, tr.w,
                 renewal_alpha(p.objective, p.objective_params), p.grow.eta, comm);
  }

  const BoostParams& p;
  const Data& tr;
  std::vector<const Data*> evals;
  const Comm& comm;
  RoundCallback cb;
  Stopwatch clock;
  TrainResult res;
  int K = 1;
  std::vector<std::string> metrics;
  BinCuts cuts;
  View2<std::uint8_t> bins, columns;
  std::vector<View2<std::uint8_t>> eval_bins;
  std::vector<View2<double>> eval_margin;
  View1<float> y, w;
  View2<double> margin;
  std::unique_ptr<HistogramBuilder> hb;
  std::size_t n = 0;
  double bound_g = 0, bound_h = 0;
  bool packed_gradients = false;
  View2<double> g_all, h_all;
  std::vector<View1<double>> g, h;
  View1<int> in_bag;
  std::unique_ptr<RowPartition> part;
  QuantGrad q;
  std::unique_ptr<WatchedAllreduce> watched;
  std::vector<double> maxima;
  double best = 0;
  int round = 0;  // the next round to grow
  bool early_stopped = false;
};

void Booster::State::grow_round() {
  trace::Scope round_trace("round");
  Model& model = res.model;
  // Gradients of all outputs come from the margins before this round's trees.
  std::vector<GradientRange> range(static_cast<std::size_t>(K));
  if (packed_gradients) {  // binary: K = 1
    prepare_packed(q, bound_g, bound_h, tr.global_rows, n);
    binary_gradients_packed(margin, y, w, q.scale_g, q.scale_h, q.p);
  } else if (p.objective == Objective::multiclass) {
    range = softmax_gradients(model.num_class, margin, y, w, g_all, h_all);
  } else if (p.objective == Objective::lambdarank) {  // over whole queries (Note [queries on ranks])
    range[0] = lambdarank_gradients(margin, y, w, tr.query, g[0], h[0], p.objective_params);
  } else {
    for (int k = 0; k < K; ++k)
      range[static_cast<std::size_t>(k)] = gradients(p.objective, model.num_class, k, margin, y, w, g[k], h[k],
                                                     p.objective_params);
  }
  if (p.subsample < 1.0)
    bag_rows(in_bag, p.subsample, p.seed, tr.first_row, round);  // else every row is in the bag
  const auto allowed = sample_features(static_cast<int>(tr.cols), p.colsample, p.seed, round);
  const auto shown_round = static_cast<std::uint64_t>(round + 1);
  for (int k = 0; k < K; ++k) {
    maxima[2 * static_cast<std::size_t>(k)] = range[static_cast<std::size_t>(k)].max_abs_g;
    maxima[2 * static_cast<std::size_t>(k) + 1] = range[static_cast<std::size_t>(k)].max_h;
  }
  if (!packed_gradients)
    watched->max(maxima.data(), maxima.size(), shown_round);  // the quantization scales' global maxima
  for (int k = 0; k < K; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    if (!packed_gradients)
      quantize(g[k], h[k], maxima[2 * kk], maxima[2 * kk + 1], tr.global_rows, q, p.quantized_gradients);
    if (p.subsample < 1.0) part->reset(in_bag);
    else part->reset_all();
    Tree t = grow_tree(p.grow, cuts, *hb, columns, q, allowed, *part, *watched, shown_round);
    if (renews_leaves(p.objective)) renew(t);  // K = 1
    add_tree_trained(t, cuts, bins, columns, *part, margin, k);
    for (std::size_t e = 0; e < evals.size(); ++e) add_tree_binned(t, cuts, eval_bins[e], eval_margin[e], k);
    model.trees.push_back(std::move(t));
    model.tree_output.push_back(k);
  }
  // Metrics cost a pass over every eval set (and a gather for AUC): computed on the rounds that
  // report them, the last round, and every round when early stopping watches them.
  const bool report = p.early_stopping_rounds > 0 || round + 1 == p.num_trees ||
                      (p.eval_every > 0 && (round + 1) % p.eval_every == 0);
  if (report) {
    std::vector<EvalResult> results;
    for (std::size_t e = 0; e < evals.size(); ++e) {
      const auto m = host_margins(eval_margin[e]);
      for (const auto& name : metrics)
        results.push_back({evals[e]->name + "-" + name,
                           evaluate(name, p.objective, model.num_class, m, evals[e]->y, evals[e]->w, comm,
                                    p.objective_params, evals[e]->query)});
    }
    res.history.push_back(results);
    res.history_round.push_back(round);
    if (cb) cb(round, results);
    // Early stopping on the first metric of the first eval set: values are exact global figures,
    // so every rank takes the same decision without communicating.
    if (p.early_stopping_rounds > 0 && !results.empty()) {
      const double v = results[0].value;
      const bool better = res.best_round < 0 || (metric_higher_is_better(metrics[0]) ? v > best : v < best);
      if (better) {
        best = v;
        res.best_round = round;
      } else if (round - res.best_round >= p.early_stopping_rounds) {
        early_stopped = true;
      }
    }
  }
  ++round;
}

Booster::Booster(const BoostParams& p, const Data& train, std::vector<float>* release,
                 const std::vector<const Data*>& evals, const Comm& comm, const RoundCallback& cb,
                 const BoostResume* resume)
    : s_(std::make_unique<State>(p, train, release, evals, comm, cb, resume)) {}

Booster::~Booster() = default;

bool Booster::more() const { return !s_->early_stopped && s_->round < s_->p.num_trees; }

void Booster::grow_round() { s_->grow_round(); }

int Booster::rounds() const { return s_->round; }
const Model& Booster::model() const { return s_->res.model; }
int Booster::best_round() const { return s_->res.best_round; }
double Booster::best() const { return s_->best; }

TrainResult Booster::finish(bool stopped) {
  TrainResult& res = s_->res;
  Model& model = res.model;
  res.stopped = stopped;
  const int trained = static_cast<int>(model.trees.size());
  if (!stopped && s_->p.early_stopping_rounds > 0 && res.best_round >= 0) model.truncate(res.best_round + 1);
  // The training rows' margins are the final model's unless early stopping dropped rounds.
  if (static_cast<int>(model.trees.size()) == trained) {
    res.train_margins = host_margins(s_->margin);
    for (const auto& m : s_->eval_margin) res.eval_margins.push_back(host_margins(m));
  }
  fence();
  res.seconds = s_->clock.seconds();
  return std::move(res);
}

namespace {

// `release`: tr.x itself, freed once binned (train_releasing_inputs), or null.
TrainResult train_impl(const BoostParams& p, const Data& tr, std::vector<float>* release,
                       const std::vector<const Data*>& evals, const Comm& comm, const RoundCallback& cb,
                       const BoostResume* resume) {
  Booster booster(p, tr, release, evals, comm, cb, resume);
  while (booster.more()) booster.grow_round();
  return booster.finish(false);
}

}  // namespace

TrainResult train(const BoostParams& p, const Data& tr, const std::vector<const Data*>& evals, const Comm& comm,
                  const RoundCallback& cb, const BoostResume* resume) {
  return train_impl(p, tr, nullptr, evals, comm, cb, resume);
}

TrainResult train_releasing_inputs(const BoostParams& p, Data& tr, const std::vector<const Data*>& evals,
                                   const Comm& comm, const RoundCallback& cb, const BoostResume* resume) {
  if (p.early_stopping_rounds > 0)
    throw Error("internal: train_releasing_inputs without early stopping only (the training rows are re-scored)");
  return train_impl(p, tr, &tr.x, evals, comm, cb, resume);
}

}  // namespace hpct::gbdt
