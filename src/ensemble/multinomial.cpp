// The multiclass stacking meta-model: L2 multinomial logistic regression on the members'
// log-probabilities, fitted by Newton's method with step halving (see combiner.hpp).
#include <algorithm>
#include <cmath>

#include "ensemble/combiner.hpp"

namespace hpct::ensemble {

namespace {

// Row features of the meta-model: 1 (the intercept), then log p of every member and class.
std::vector<double> design(const ScoreTable& scores, std::size_t n, std::size_t K) {
  const std::size_t m = scores.size(), P = m * K + 1;
  std::vector<double> x(n * P);
  for (std::size_t i = 0; i < n; ++i) {
    double* r = x.data() + i * P;
    r[0] = 1;
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t c = 0; c < K; ++c) r[1 + j * K + c] = log_probability(scores[j][i * K + c]);
  }
  return x;
}

// Softmax of class logits z (K) into p.
void softmax(const double* z, double* p, std::size_t K) {
  const double mx = *std::max_element(z, z + K);
  double s = 0;
  for (std::size_t k = 0; k < K; ++k) s += (p[k] = std::exp(z[k] - mx));
  for (std::size_t k = 0; k < K; ++k) p[k] /= s;
}

}  // namespace

// Note [multinomial intercepts]: adding one constant to every class's logit changes no
// probability, so the unpenalised intercepts leave the loss flat along that direction (and, without
// an L2 penalty, so do the coefficients). A ridge of 1e-10 x the total row weight on those
// parameters makes the Newton system regular; it picks the intercepts summing to (nearly) zero and
// moves no probability measurably.
Combiner fit_multinomial(const ScoreTable& scores, const std::vector<float>& y, const std::vector<float>& w,
                         double l2, int num_class) {
  const std::size_t K = static_cast<std::size_t>(num_class), m = scores.size(), n = y.size();
  const std::size_t P = m * K + 1, d = K * P;  // parameter k * P + a: class k, feature a (0: intercept)
  const std::vector<double> x = design(scores, n, K);
  double wsum = 0;
  for (std::size_t i = 0; i < n; ++i) wsum += w.empty() ? 1.0 : w[i];
  const double tiny = 1e-10 * std::max(wsum, 1.0);
  auto penalty = [&](std::size_t a) { return a == 0 ? tiny : (l2 > 0 ? l2 : tiny); };
  std::vector<double> z(K), p(K);
  auto logits = [&](const std::vector<double>& b, std::size_t i) {
    const double* r = x.data() + i * P;
    for (std::size_t k = 0; k < K; ++k) {
      double v = 0;
      for (std::size_t a = 0; a < P; ++a) v += b[k * P + a] * r[a];
      z[k] = v;
    }
  };
  auto objective = [&](const std::vector<double>& b) {
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      logits(b, i);
      const double mx = *std::max_element(z.begin(), z.end());
      double s = 0;
      for (std::size_t k = 0; k < K; ++k) s += std::exp(z[k] - mx);
      total += (w.empty() ? 1.0 : w[i]) * (mx + std::log(s) - z[static_cast<std::size_t>(y[i])]);
    }
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t a = 0; a < P; ++a) total += 0.5 * penalty(a) * b[k * P + a] * b[k * P + a];
    return total;
  };
  std::vector<double> beta(d, 0.0);
  double f = objective(beta);
  for (int it = 0; it < 100; ++it) {
    std::vector<std::vector<double>> h(d, std::vector<double>(d, 0.0));
    std::vector<double> g(d, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      logits(beta, i);
      softmax(z.data(), p.data(), K);
      const double wi = w.empty() ? 1.0 : w[i];
      const double* r = x.data() + i * P;
      const auto yi = static_cast<std::size_t>(y[i]);
      for (std::size_t k = 0; k < K; ++k) {
        const double res = wi * (p[k] - (k == yi ? 1.0 : 0.0));
        for (std::size_t a = 0; a < P; ++a) g[k * P + a] += res * r[a];
        // H[(k,a),(l,b)] = sum_i w_i p_k (delta_kl - p_l) x_a x_b; the lower triangle, mirrored below.
        for (std::size_t l = 0; l <= k; ++l) {
          const double c = wi * p[k] * ((k == l ? 1.0 : 0.0) - p[l]);
          for (std::size_t a = 0; a < P; ++a) {
            const double ca = c * r[a];
            double* row = h[k * P + a].data() + l * P;
            for (std::size_t b = 0; b < P; ++b) row[b] += ca * r[b];
          }
        }
      }
    }
    for (std::size_t u = 0; u < d; ++u)
      for (std::size_t v = u + 1; v < d; ++v) h[u][v] = h[v][u];
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t a = 0; a < P; ++a) {
        h[k * P + a][k * P + a] += penalty(a);
        g[k * P + a] += penalty(a) * beta[k * P + a];
      }
    const std::vector<double> delta = solve_linear(h, g);
    std::vector<double> next(d);
    double fn = f, t = 1;
    for (int tries = 0; tries < 40; ++tries, t *= 0.5) {
      for (std::size_t u = 0; u < d; ++u) next[u] = beta[u] - t * delta[u];
      fn = objective(next);
      if (fn <= f) break;
    }
    if (!(fn <= f)) break;  // no step decreases the loss: at the optimum to rounding
    double moved = 0;
    for (std::size_t u = 0; u < d; ++u) moved = std::max(moved, std::fabs(next[u] - beta[u]));
    beta = next;
    f = fn;
    if (moved < 1e-12) break;
  }
  Combiner c;
  c.method = "stacking";
  c.num_class = num_class;
  c.l2 = l2;
  for (std::size_t k = 0; k < K; ++k) {
    c.intercepts.push_back(beta[k * P]);
    c.coef.insert(c.coef.end(), beta.begin() + static_cast<std::ptrdiff_t>(k * P + 1),
                  beta.begin() + static_cast<std::ptrdiff_t>((k + 1) * P));
  }
  return c;
}

}  // namespace hpct::ensemble
