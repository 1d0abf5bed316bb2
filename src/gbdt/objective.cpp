// Objectives: squared error, binary logistic, multiclass softmax, the log-link ones (Note [log-link
// objectives] in objective.hpp) and the robust ones (Note [robust objectives]).
#include "gbdt/objective.hpp"

#include "gbdt/packed.hpp"

#include <cmath>
#include <type_traits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/fixed_point.hpp"
#include "gbdt/logistic.hpp"
#include "gbdt/rank_objective.hpp"
#include "gbdt/renew.hpp"

namespace hpct::gbdt {

std::pair<std::string, std::string> objective_param_error(Objective o, const ObjectiveParams& p) {
  if (o == Objective::tweedie && !(p.tweedie_variance_power > 1 && p.tweedie_variance_power < 2))
    return {"tweedie_variance_power", "must lie strictly between 1 and 2"};
  if (o == Objective::quantile && !(p.quantile_alpha > 0 && p.quantile_alpha < 1))
    return {"quantile_alpha", "must lie strictly between 0 and 1"};
  if (o == Objective::pseudo_huber && !(p.huber_slope > 0)) return {"huber_slope", "must be > 0"};
  for (std::size_t l = 0; l < p.label_gain.size(); ++l)  // every objective: the ndcg metrics read it too
    if (!(p.label_gain[l] >= 0) || !std::isfinite(p.label_gain[l]))
      return {"label_gain", strf("the gain of label %zu, %g, is not a number >= 0", l, p.label_gain[l])};
  return {};
}

Objective parse_objective(const std::string& name) {
  if (name == "regression" || name == "squared_error") return Objective::regression;
  if (name == "binary") return Objective::binary;
  if (name == "multiclass") return Objective::multiclass;
  if (name == "poisson") return Objective::poisson;
  if (name == "gamma") return Objective::gamma;
  if (name == "tweedie") return Objective::tweedie;
  if (name == "lambdarank" || name == "rank_ndcg") return Objective::lambdarank;
  if (name == "absolute_error") return Objective::absolute_error;
  if (name == "quantile") return Objective::quantile;
  if (name == "pseudo_huber") return Objective::pseudo_huber;
  throw Error("unknown objective '" + name + "'", ExitCode::bad_input);
}

std::string objective_name(Objective o) {
  switch (o) {
    case Objective::regression: return "regression";
    case Objective::binary: return "binary";
    case Objective::poisson: return "poisson";
    case Objective::gamma: return "gamma";
    case Objective::tweedie: return "tweedie";
    case Objective::lambdarank: return "lambdarank";
    case Objective::absolute_error: return "absolute_error";
    case Objective::quantile: return "quantile";
    case Objective::pseudo_huber: return "pseudo_huber";
    default: return "multiclass";
  }
}

void check_labels(Objective o, int num_class, const std::vector<float>& y, const std::vector<int>& line,
                  const std::string& file, const ObjectiveParams& params, const std::string& part) {
  if (o == Objective::lambdarank) check_rank_labels(params.label_gain, y, line, file);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float v = y[i];
    const int ln = i < line.size() ? line[i] : 0;
    // The split the row is in, where the file alone does not say it (data_file's held-out tail).
    const auto input_error = [&](const std::string& f, int l, const std::string& key, const std::string& what) {
      hpct::input_error(f, l, key, part.empty() ? what : what + " (a row of " + part + ")");
    };
    if (!std::isfinite(v)) input_error(file, ln, "", "label is not a finite number");
    if (o == Objective::binary && v != 0.0f && v != 1.0f)
      input_error(file, ln, "objective", strf("label %g is outside the binary objective's {0, 1}", v));
    if ((o == Objective::poisson || o == Objective::tweedie) && v < 0)
      input_error(file, ln, "objective",
                  strf("label %g is negative; the %s objective models amounts >= 0", v, objective_name(o).c_str()));
    if (o == Objective::gamma && !(v > 0))
      input_error(file, ln, "objective",
                  strf("label %g is not positive; the gamma objective models amounts > 0", v));
    if (o == Objective::multiclass) {
      if (v != std::floor(v) || v < 0)
        input_error(file, ln, "objective", strf("label %g is not a class index (0, 1, ...)", v));
      if (v >= num_class)
        input_error(file, ln, "num_class",
                    strf("label %g needs at least %d classes, num_class is %d", v, int(v) + 1, num_class));
    }
  }
}

std::vector<double> base_margins_from_data(Objective o, int num_class, const std::vector<float>& y,
                                           const std::vector<float>& w, const Comm& comm,
                                           const ObjectiveParams& params) {
  const std::size_t n = y.size();
  auto wt = [&](std::size_t i) { return w.empty() ? 1.0 : static_cast<double>(w[i]); };
  std::vector<double> terms(n);
  for (std::size_t i = 0; i < n; ++i) terms[i] = wt(i);
  const double wsum = exact_sum(comm, terms);
  if (!(wsum > 0)) throw Error("training data has no rows (or zero total weight)", ExitCode::bad_input);
  const int K = num_outputs(o, num_class);
  std::vector<double> base(static_cast<std::size_t>(K), 0.0);
  if (o == Objective::lambdarank) return base;  // scores start at 0, as in LightGBM and XGBoost
  if (o == Objective::multiclass) {
    for (int k = 0; k < K; ++k) {
      for (std::size_t i = 0; i < n; ++i) terms[i] = static_cast<int>(y[i]) == k ? wt(i) : 0.0;
      // A class absent from the data gets a tiny prior instead of -inf.
      const double p = std::fmax(exact_sum(comm, terms) / wsum, 1e-12);
      base[static_cast<std::size_t>(k)] = std::log(p);
    }
    return base;
  }
  if (renews_leaves(o)) {  // the labels' median / alpha-quantile (Note [quantile rule])
    const std::vector<double> v(y.begin(), y.end()), ww(w.begin(), w.end());
    return {global_quantile(v, ww, renewal_alpha(o, params), comm)};
  }
  if (o == Objective::pseudo_huber) {  // -G/H at margin 0, as XGBoost's intercept (Note [robust objectives])
    std::vector<double> hs(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double r = -static_cast<double>(y[i]) / params.huber_slope, s = 1 + r * r;
      terms[i] = wt(i) * -static_cast<double>(y[i]) / std::sqrt(s);
      hs[i] = wt(i) / (s * std::sqrt(s));
    }
    return {-exact_sum(comm, terms) / exact_sum(comm, hs)};
  }
  for (std::size_t i = 0; i < n; ++i) terms[i] = wt(i) * y[i];
  const double mean = exact_sum(comm, terms) / wsum;
  if (o == Objective::regression) base[0] = mean;
  else if (log_link(o)) {
    if (!(mean > 0))
      throw Error("every training label is 0: the " + objective_name(o) + " objective's mean would be 0 (log 0)",
                  ExitCode::bad_input);
    base[0] = std::log(mean);
  } else {
    const double p = std::fmin(std::fmax(mean, 1e-12), 1 - 1e-12);
    base[0] = std::log(p / (1 - p));
  }
  return base;
}

std::vector<double> base_margins_from_value(Objective o, int num_class, double value) {
  const int K = num_outputs(o, num_class);
  if (o == Objective::binary) {
    if (!(value > 0 && value < 1))
      throw Error("base_score must be a probability in (0, 1) for the binary objective", ExitCode::bad_input);
    return {std::log(value / (1 - value))};
  }
  if (log_link(o)) {
    if (!(value > 0))
      throw Error("base_score must be a mean > 0 for the " + objective_name(o) + " objective", ExitCode::bad_input);
    return {std::log(value)};
  }
  return std::vector<double>(static_cast<std::size_t>(K), value);
}

namespace {
// Hessian floor as in common practice: keeps leaf values finite when p saturates.
constexpr double kMinHess = 1e-16;

// One objective's gradients of output k, and their range: MinMax carries two running values, its
// max is max |g|, its min is -max h. A kernel per objective: the objective is then known at
// compile time, not tested per row (the same arithmetic either way).
template <Objective O>
struct GradientKernel {
  View2<double> margin;
  View1<float> y, w;
  View1<double> g, h;
  int K, k;
  bool weighted;
  double mc_factor;
  double param;  // poisson: max_delta_step; tweedie: the variance power; quantile: alpha; pseudo_huber: slope
  KOKKOS_INLINE_FUNCTION void operator()(const int i, Kokkos::MinMaxScalar<double>& r) const {
    double gi = 0, hi = 1;
    if constexpr (O == Objective::regression) {
      gi = margin(i, 0) - y(i);
      hi = 1;
    } else if constexpr (O == Objective::binary) {
      const double p = 1.0 / (1.0 + kmath::exp(-margin(i, 0)));
      gi = p - y(i);
      hi = kmax(p * (1 - p), kMinHess);
    } else if constexpr (O == Objective::poisson) {
      gi = kmath::exp(margin(i, 0)) - y(i);
      hi = kmath::exp(margin(i, 0) + param);
    } else if constexpr (O == Objective::gamma) {
      const double r = y(i) * kmath::exp(-margin(i, 0));
      gi = 1 - r;
      hi = kmax(r, kMinHess);
    } else if constexpr (O == Objective::tweedie) {
      const double a = y(i) * kmath::exp((1 - param) * margin(i, 0));
      const double b = kmath::exp((2 - param) * margin(i, 0));
      gi = b - a;
      hi = kmax((2 - param) * b - (1 - param) * a, kMinHess);
    } else if constexpr (O == Objective::absolute_error) {
      const double r = margin(i, 0) - y(i);
      gi = r > 0 ? 1.0 : r < 0 ? -1.0 : 0.0;
      hi = 1;
    } else if constexpr (O == Objective::quantile) {
      gi = margin(i, 0) - y(i) >= 0 ? 1 - param : -param;
      hi = 1;
    } else if constexpr (O == Objective::pseudo_huber) {
      const double r = margin(i, 0) - y(i), z = r / param, s = 1 + z * z, rs = kmath::sqrt(s);
      gi = r / rs;
      hi = 1 / (s * rs);
    } else {
      double mx = margin(i, 0);
      for (int c = 1; c < K; ++c) mx = kmax(mx, margin(i, c));
      double s = 0;
      for (int c = 0; c < K; ++c) s += kmath::exp(margin(i, c) - mx);
      const double p = kmath::exp(margin(i, k) - mx) / s;
      gi = p - (static_cast<int>(y(i)) == k ? 1.0 : 0.0);
      hi = kmax(mc_factor * p * (1 - p), kMinHess);
    }
    const double wi = weighted ? static_cast<double>(w(i)) : 1.0;
    gi *= wi;
    hi *= wi;
    g(i) = gi;
    h(i) = hi;
    r.max_val = kmax(r.max_val, kmath::fabs(gi));
    r.min_val = kmin(r.min_val, -kmath::fabs(hi));
  }
};

template <Objective O>
GradientRange run_gradients(const GradientKernel<O>& kernel, int n) {
  Kokkos::MinMaxScalar<double> range;
  Kokkos::parallel_reduce("gbdt::gradients", hpct::range(0, n), kernel, Kokkos::MinMax<double>(range));
  return {kmax(0.0, range.max_val), kmax(0.0, -range.min_val)};
}
}  // namespace

GradientRange gradients(Objective o, int num_class, int k, const View2<double>& margin, const View1<float>& y,
                        const View1<float>& w, const View1<double>& g, const View1<double>& h,
                        const ObjectiveParams& params) {
  const int n = static_cast<int>(margin.extent(0));
  const int K = static_cast<int>(margin.extent(1));
  const bool weighted = w.extent(0) > 0;
  const double mc = num_class > 1 ? double(num_class) / (num_class - 1) : 1.0;
  // One kernel per objective (the objective known at compile time); the parameter is the one the
  // objective reads (poisson: max_delta_step, tweedie: the variance power, quantile: alpha,
  // pseudo_huber: the slope), else unused.
  const double param = o == Objective::poisson        ? params.poisson_max_delta_step
                       : o == Objective::quantile     ? params.quantile_alpha
                       : o == Objective::pseudo_huber ? params.huber_slope
                                                      : params.tweedie_variance_power;
  const auto run = [&](auto objective) {
    return run_gradients(GradientKernel<decltype(objective)::value>{margin, y, w, g, h, K, k, weighted, mc, param},
                         n);
  };
  switch (o) {
    case Objective::regression: return run(std::integral_constant<Objective, Objective::regression>{});
    case Objective::binary: return run(std::integral_constant<Objective, Objective::binary>{});
    case Objective::poisson: return run(std::integral_constant<Objective, Objective::poisson>{});
    case Objective::gamma: return run(std::integral_constant<Objective, Objective::gamma>{});
    case Objective::tweedie: return run(std::integral_constant<Objective, Objective::tweedie>{});
    case Objective::lambdarank:
      throw Error("internal: lambdarank's gradients need the queries (lambdarank_gradients)");
    case Objective::absolute_error: return run(std::integral_constant<Objective, Objective::absolute_error>{});
    case Objective::quantile: return run(std::integral_constant<Objective, Objective::quantile>{});
    case Objective::pseudo_huber: return run(std::integral_constant<Objective, Objective::pseudo_huber>{});
    default: return run(std::integral_constant<Objective, Objective::multiclass>{});
  }
}

std::vector<GradientRange> softmax_gradients(int num_class, const View2<double>& margin, const View1<float>& y,
                                             const View1<float>& w, const View2<double>& g,
                                             const View2<double>& h) {
  const int n = static_cast<int>(margin.extent(0));
  const int K = static_cast<int>(margin.extent(1));
  const bool weighted = w.extent(0) > 0;
  const double mc_factor = num_class > 1 ? double(num_class) / (num_class - 1) : 1.0;
  // GradientKernel<multiclass>'s arithmetic for every k of a row: the same bits.
  Kokkos::parallel_for(
      "gbdt::softmax_gradients", hpct::range(0, n), KOKKOS_LAMBDA(const int i) {
        double mx = margin(i, 0);
        for (int c = 1; c < K; ++c) mx = kmax(mx, margin(i, c));
        double s = 0;
        for (int c = 0; c < K; ++c) s += kmath::exp(margin(i, c) - mx);
        const double wi = weighted ? static_cast<double>(w(i)) : 1.0;
        const int label = static_cast<int>(y(i));
        for (int k = 0; k < K; ++k) {
          const double p = kmath::exp(margin(i, k) - mx) / s;
          g(k, i) = (p - (label == k ? 1.0 : 0.0)) * wi;
          h(k, i) = kmax(mc_factor * p * (1 - p), kMinHess) * wi;
        }
      });
  std::vector<GradientRange> range(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    Kokkos::MinMaxScalar<double> r;
    Kokkos::parallel_reduce(
        "gbdt::softmax_gradient_range", hpct::range(0, n),
        KOKKOS_LAMBDA(const int i, Kokkos::MinMaxScalar<double>& m) {
          m.max_val = kmax(m.max_val, kmath::fabs(g(k, i)));
          m.min_val = kmin(m.min_val, -kmath::fabs(h(k, i)));
        },
        Kokkos::MinMax<double>(r));
    range[static_cast<std::size_t>(k)] = {kmax(0.0, r.max_val), kmax(0.0, -r.min_val)};
  }
  return range;
}

bool fixed_gradient_bounds(Objective o, double max_weight, double& max_abs_g, double& max_h) {
  if (o != Objective::binary) return false;
  max_abs_g = max_weight;
  max_h = max_weight * 0.25;  // kMinHess is far below
  return true;
}

void binary_gradients_packed(const View2<double>& margin, const View1<float>& y, const View1<float>& w, double sg,
                             double sh, const View1<long long>& p) {
  const int n = static_cast<int>(margin.extent(0));
  const bool weighted = w.extent(0) > 0;
  // The arithmetic of GradientKernel<binary>, with the logistic of Note [logistic without libm].
  if (kHostBackend) {
    // Host: plain loops over raw arrays (margins [n, 1]), which the compiler vectorizes.
    const double* m = margin.data();
    const float* yv = y.data();
    const float* wv = w.data();
    long long* out = p.data();
    const long long chunks = host_chunks(n, 16384);
    const long long per = (n + chunks - 1) / chunks;
    for_each_host_chunk("gbdt::binary_gradients_packed", chunks, [=](const int c) {
      const long long lo = c * per, hi = kmin(static_cast<long long>(n), lo + per);
      if (weighted) {
        for (long long i = lo; i < hi; ++i) {
          const double pr = logistic(m[i]);
          const auto wi = static_cast<double>(wv[i]);
          out[i] = pack_gh((pr - yv[i]) * wi, kmax(pr * (1 - pr), kMinHess) * wi, sg, sh);
        }
      } else {  // a loop of its own: no weight to load (w is empty)
        for (long long i = lo; i < hi; ++i) {
          const double pr = logistic(m[i]);
          out[i] = pack_gh(pr - yv[i], kmax(pr * (1 - pr), kMinHess), sg, sh);
        }
      }
    });
    return;
  }
  Kokkos::parallel_for(
      "gbdt::binary_gradients_packed", hpct::range(0, n), KOKKOS_LAMBDA(const int i) {
        const double pr = logistic(margin(i, 0));
        const double wi = weighted ? static_cast<double>(w(i)) : 1.0;
        p(i) = pack_gh((pr - y(i)) * wi, kmax(pr * (1 - pr), kMinHess) * wi, sg, sh);
      });
}

void transform(Objective o, int num_class, std::vector<double>& m) {
  const int K = num_outputs(o, num_class);
  const std::size_t n = m.size() / static_cast<std::size_t>(K);
  if (o == Objective::binary) {
    for (double& v : m) v = 1.0 / (1.0 + std::exp(-v));
  } else if (log_link(o)) {
    for (double& v : m) v = std::exp(v);
  } else if (o == Objective::multiclass) {
    for (std::size_t i = 0; i < n; ++i) {
      double* r = &m[i * static_cast<std::size_t>(K)];
      double mx = r[0];
      for (int c = 1; c < K; ++c) mx = std::fmax(mx, r[c]);
      double s = 0;
      for (int c = 0; c < K; ++c) s += (r[c] = std::exp(r[c] - mx));
      for (int c = 0; c < K; ++c) r[c] /= s;
    }
  }
}

}  // namespace hpct::gbdt
