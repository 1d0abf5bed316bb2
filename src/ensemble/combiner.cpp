// Fitting and applying the ensemble combiners (see combiner.hpp).
#include "ensemble/combiner.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace hpct::ensemble {

namespace {

constexpr double kEps = 1e-15;

double row_weight(const std::vector<float>& w, std::size_t i) { return w.empty() ? 1.0 : w[i]; }

}  // namespace

std::vector<double> solve_linear(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    std::swap(b[c], b[p]);
    if (std::fabs(a[c][c]) < 1e-300)
      throw Error("ensemble: the meta-model's equations are singular (identical members?)");
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (std::size_t c = n; c-- > 0;) {
    double s = b[c];
    for (std::size_t k = c + 1; k < n; ++k) s -= a[c][k] * x[k];
    x[c] = s / a[c][c];
  }
  return x;
}

namespace {

// Euclidean projection onto the probability simplex (sort-based; Held, Wolfe and Crowder 1974).
std::vector<double> project_to_simplex(const std::vector<double>& v) {
  std::vector<double> u = v;
  std::sort(u.begin(), u.end(), std::greater<double>());
  double cum = 0, theta = 0;
  for (std::size_t j = 0; j < u.size(); ++j) {
    cum += u[j];
    const double t = (cum - 1) / static_cast<double>(j + 1);
    if (u[j] - t > 0) theta = t;
  }
  std::vector<double> x(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) x[j] = std::max(v[j] - theta, 0.0);
  return x;
}

// Weighted mean loss of the average with weights `a`, and its gradient. Multiclass (K classes):
// the loss is -log of the averaged probability of the row's class, so only that column is read.
double average_loss(Task task, const ScoreTable& s, const std::vector<float>& y, const std::vector<float>& w,
                    const std::vector<double>& a, std::vector<double>* grad, std::size_t K) {
  const std::size_t m = s.size(), n = y.size();
  double total = 0, wsum = 0;
  if (grad) grad->assign(m, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    // The score column the loss reads: the row's class for multiclass.
    const std::size_t at = task == Task::multiclass ? i * K + static_cast<std::size_t>(y[i]) : i;
    double p = 0;
    for (std::size_t j = 0; j < m; ++j) p += a[j] * s[j][at];
    const double wi = row_weight(w, i);
    double dp;  // d loss / d p
    if (task == Task::multiclass) {
      const double q = std::max(p, kEps);
      total += wi * -std::log(q);
      dp = -1 / q;
    } else if (task == Task::regression) {
      const double r = p - y[i];
      total += wi * r * r;
      dp = 2 * r;
    } else {
      const double q = std::min(std::max(p, kEps), 1 - kEps);
      total += wi * -(y[i] > 0.5f ? std::log(q) : std::log(1 - q));
      dp = y[i] > 0.5f ? -1 / q : 1 / (1 - q);
    }
    wsum += wi;
    if (grad)
      for (std::size_t j = 0; j < m; ++j) (*grad)[j] += wi * dp * s[j][at];
  }
  if (grad)
    for (double& g : *grad) g /= wsum;
  return total / wsum;
}

}  // namespace

double logit(double p) {
  const double q = std::min(std::max(p, kEps), 1 - kEps);
  return std::log(q / (1 - q));
}

double log_probability(double p) { return std::log(std::min(std::max(p, kEps), 1.0)); }

namespace {
// Multiclass: the average of the members' probability rows, or the multinomial meta-model's
// softmax (see Combiner).
std::vector<double> combine_multiclass(const Combiner& c, const ScoreTable& scores) {
  const std::size_t K = static_cast<std::size_t>(c.num_class), m = scores.size();
  const std::size_t n = scores.empty() ? 0 : scores.front().size() / K;
  std::vector<double> out(n * K, 0.0), z(K);
  for (std::size_t i = 0; i < n; ++i) {
    double* o = out.data() + i * K;
    if (c.method == "average") {
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t k = 0; k < K; ++k) o[k] += c.weights[j] * scores[j][i * K + k];
      continue;
    }
    double mx = -HUGE_VAL;
    for (std::size_t k = 0; k < K; ++k) {
      double v = c.intercepts[k];
      const double* row = c.coef.data() + k * m * K;
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t q = 0; q < K; ++q) v += row[j * K + q] * log_probability(scores[j][i * K + q]);
      z[k] = v;
      mx = std::max(mx, v);
    }
    double sum = 0;
    for (std::size_t k = 0; k < K; ++k) sum += (o[k] = std::exp(z[k] - mx));
    for (std::size_t k = 0; k < K; ++k) o[k] /= sum;
  }
  return out;
}
}  // namespace

std::vector<double> combine(const Combiner& c, Task task, const ScoreTable& scores) {
  if (task == Task::multiclass) return combine_multiclass(c, scores);
  const std::size_t n = scores.empty() ? 0 : scores.front().size();
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = c.method == "average" ? 0.0 : c.intercept;
    for (std::size_t j = 0; j < scores.size(); ++j) {
      if (c.method == "average") v += c.weights[j] * scores[j][i];
      else v += c.coef[j] * (task == Task::binary ? logit(scores[j][i]) : scores[j][i]);
    }
    out[i] = c.method == "stacking" && task == Task::binary ? 1 / (1 + std::exp(-v)) : v;
  }
  return out;
}

Combiner given_average(const std::vector<double>& weights, std::size_t members, const std::string& origin) {
  auto fail = [&](const std::string& what) {
    throw Error((origin.empty() ? "" : origin + ": ") + what, ExitCode::bad_input);
  };
  if (weights.size() != members)
    fail(std::to_string(weights.size()) + " weights for " + std::to_string(members) + " members");
  double sum = 0;
  for (const double x : weights) {
    if (!(x >= 0) || !std::isfinite(x)) fail("weights must be finite and >= 0");
    sum += x;
  }
  if (sum <= 0) fail("the weights are all 0");
  Combiner c;
  c.method = "average";
  for (const double x : weights) c.weights.push_back(x / sum);
  return c;
}

// Projected gradient descent on the simplex with a backtracking step: the loss is convex in the
// weights (squared error; logloss of a linear mix), so this reaches the optimum; a few members and
// a few hundred iterations make it cheap next to scoring.
Combiner fit_average(Task task, const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w,
                     int num_class) {
  const std::size_t m = scores.size(), K = static_cast<std::size_t>(num_class);
  std::vector<double> a(m, 1.0 / static_cast<double>(m)), g;
  double f = average_loss(task, scores, y, w, a, &g, K), step = 1.0;
  for (int it = 0; it < 500; ++it) {
    std::vector<double> next;
    double fn = f;
    for (int tries = 0; tries < 60; ++tries) {
      std::vector<double> v(m);
      for (std::size_t j = 0; j < m; ++j) v[j] = a[j] - step * g[j];
      next = project_to_simplex(v);
      fn = average_loss(task, scores, y, w, next, nullptr, K);
      if (fn <= f) break;
      step *= 0.5;
    }
    if (!(fn <= f)) break;
    double moved = 0;
    for (std::size_t j = 0; j < m; ++j) moved = std::max(moved, std::fabs(next[j] - a[j]));
    a = next;
    const bool done = moved < 1e-10 || f - fn < 1e-14 * std::max(1.0, f);
    f = average_loss(task, scores, y, w, a, &g, K);
    step *= 2;
    if (done) break;
  }
  Combiner c;
  c.method = "average";
  c.num_class = task == Task::multiclass ? num_class : 1;
  c.weights = a;
  return c;
}

Combiner fit_stacking(Task task, const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w,
                      double l2, int num_class) {
  if (task == Task::multiclass) return fit_multinomial(scores, y, w, l2, num_class);
  const std::size_t m = scores.size(), n = y.size(), d = m + 1;  // parameter 0: the intercept
  auto feature = [&](std::size_t j, std::size_t i) {
    return j == 0 ? 1.0 : (task == Task::binary ? logit(scores[j - 1][i]) : scores[j - 1][i]);
  };
  std::vector<double> beta(d, 0.0);
  // Ridge is one Newton step from 0 (the loss is quadratic); logistic iterates Newton (IRLS) to
  // convergence: the penalised logloss is strictly convex, so the steps need no line search
  // unless the start is far; halving guards that.
  const int iterations = task == Task::regression ? 1 : 100;
  auto objective = [&](const std::vector<double>& b) {
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double z = 0;
      for (std::size_t j = 0; j < d; ++j) z += b[j] * feature(j, i);
      const double wi = row_weight(w, i);
      if (task == Task::regression) total += 0.5 * wi * (z - y[i]) * (z - y[i]);
      else total += wi * (std::log1p(std::exp(-std::fabs(z))) + std::max(z, 0.0) - (y[i] > 0.5f ? z : 0.0));
    }
    for (std::size_t j = 1; j < d; ++j) total += 0.5 * l2 * b[j] * b[j];
    return total;
  };
  double f = objective(beta);
  for (int it = 0; it < iterations; ++it) {
    std::vector<std::vector<double>> h(d, std::vector<double>(d, 0.0));
    std::vector<double> g(d, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      double z = 0;
      for (std::size_t j = 0; j < d; ++j) z += beta[j] * feature(j, i);
      const double wi = row_weight(w, i);
      double r, c;  // d loss / dz and d2 loss / dz2
      if (task == Task::regression) r = z - y[i], c = 1;
      else {
        const double p = 1 / (1 + std::exp(-z));
        r = p - (y[i] > 0.5f ? 1.0 : 0.0), c = std::max(p * (1 - p), 1e-12);
      }
      for (std::size_t j = 0; j < d; ++j) {
        const double fj = feature(j, i);
        g[j] += wi * r * fj;
        for (std::size_t k = 0; k <= j; ++k) h[j][k] += wi * c * fj * feature(k, i);
      }
    }
    for (std::size_t j = 0; j < d; ++j)
      for (std::size_t k = 0; k < j; ++k) h[k][j] = h[j][k];
    for (std::size_t j = 1; j < d; ++j) h[j][j] += l2, g[j] += l2 * beta[j];
    const std::vector<double> delta = solve_linear(h, g);
    double t = 1;
    std::vector<double> next(d);
    double fn = f;
    for (int tries = 0; tries < 40; ++tries, t *= 0.5) {
      for (std::size_t j = 0; j < d; ++j) next[j] = beta[j] - t * delta[j];
      fn = objective(next);
      if (fn <= f || task == Task::regression) break;
    }
    double moved = 0;
    for (std::size_t j = 0; j < d; ++j) moved = std::max(moved, std::fabs(next[j] - beta[j]));
    beta = next;
    f = fn;
    if (moved < 1e-12) break;
  }
  Combiner c;
  c.method = "stacking";
  c.intercept = beta[0];
  c.coef.assign(beta.begin() + 1, beta.end());
  c.l2 = l2;
  return c;
}

}  // namespace hpct::ensemble
