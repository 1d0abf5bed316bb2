// Loss kernels (see loss.hpp): one work item per row; sums in double.
#include "nn/loss.hpp"

#include "core/error.hpp"

namespace hpct::nn {

LossKind loss_from_name(const std::string& name) {
  if (name == "mse") return LossKind::mse;
  if (name == "cross_entropy") return LossKind::cross_entropy;
  if (name == "bce") return LossKind::bce;
  throw Error("unknown loss '" + name + "'", ExitCode::bad_input);
}

const char* loss_name(LossKind k) {
  switch (k) {
    case LossKind::mse: return "mse";
    case LossKind::cross_entropy: return "cross_entropy";
    case LossKind::bce: return "bce";
  }
  return "?";
}

namespace {

template <class Scalar>
KOKKOS_INLINE_FUNCTION int label_of(Scalar v, int classes) {
  const int c = static_cast<int>(v);
  return c < 0 ? 0 : (c >= classes ? classes - 1 : c);
}

// Per-row loss and (if write) gradient for all three kinds. d = columns of pred.
// Row weights w [n] (null: all 1) scale each row's loss and gradient (Note [network row weights] in
// train/row_weights.cpp); without them the kernels are the unweighted ones bit for bit.
template <class Scalar>
double row_losses(LossKind kind, double smoothing, const Tensor<Scalar>& pred, const Tensor<Scalar>& target,
                  const Tensor<Scalar>& dpred, bool write, bool acc, int n, double normaliser,
                  const float* weights) {
  if (n == 0) return 0.0;
  const auto y = pred.rows(n), t = target.rows(n);
  const auto dy = write ? dpred.rows(n) : pred.rows(n);
  const int d = static_cast<int>(y.extent(1));
  const bool weighted = weights != nullptr;
  const float* w = weights;
  double sum = 0;
  if (kind == LossKind::mse) {
    const Scalar scale = static_cast<Scalar>(2.0 / (normaliser * d));
    sum = sum_over(
        "loss_mse", 0, n, KOKKOS_LAMBDA(const int i, double& s) {
          double row = 0;
          const Scalar rs = weighted ? static_cast<Scalar>(w[i]) * scale : scale;
          for (int j = 0; j < d; ++j) {
            // Training takes the difference in Scalar (it is also the gradient); evaluation in double.
            const Scalar diff = y(i, j) - t(i, j);
            if (write) dy(i, j) = acc ? dy(i, j) + rs * diff : rs * diff;
            const double e = write ? static_cast<double>(diff)
                                   : static_cast<double>(y(i, j)) - static_cast<double>(t(i, j));
            row += e * e;
          }
          s += weighted ? static_cast<double>(w[i]) * (row / d) : row / d;
        });
  } else if (kind == LossKind::cross_entropy) {
    const double inv = 1.0 / normaliser, off = smoothing / d, on = 1.0 - smoothing + off;
    sum = sum_over(
        "loss_xent", 0, n, KOKKOS_LAMBDA(const int i, double& s) {
          const int c = label_of(t(i, 0), d);
          double m = static_cast<double>(y(i, 0));
          for (int j = 1; j < d; ++j) m = kmax(m, static_cast<double>(y(i, j)));
          double z = 0, qz = 0;
          for (int j = 0; j < d; ++j) {
            z += kmath::exp(static_cast<double>(y(i, j)) - m);
            qz += (j == c ? on : off) * static_cast<double>(y(i, j));
          }
          const double lse = m + kmath::log(z);
          const double wi = weighted ? static_cast<double>(w[i]) : 1.0;
          s += weighted ? wi * (lse - qz) : lse - qz;  // sum_c q_c = 1
          if (write)
            for (int j = 0; j < d; ++j) {
              const double p = kmath::exp(static_cast<double>(y(i, j)) - lse);
              const double gi = (p - (j == c ? on : off)) * inv;
              const Scalar g = static_cast<Scalar>(weighted ? wi * gi : gi);
              dy(i, j) = acc ? dy(i, j) + g : g;
            }
        });
  } else {
    const double scale = 1.0 / (normaliser * d);
    sum = sum_over(
        "loss_bce", 0, n, KOKKOS_LAMBDA(const int i, double& s) {
          double row = 0;
          const double rs = weighted ? static_cast<double>(w[i]) * scale : scale;
          for (int j = 0; j < d; ++j) {
            const double z = static_cast<double>(y(i, j)), tt = static_cast<double>(t(i, j));
            const double az = z < 0 ? -z : z;
            row += (z > 0 ? z : 0.0) - z * tt + kmath::log1p(kmath::exp(-az));
            if (write) {
              const Scalar g = static_cast<Scalar>((1.0 / (1.0 + kmath::exp(-z)) - tt) * rs);
              dy(i, j) = acc ? dy(i, j) + g : g;
            }
          }
          s += weighted ? static_cast<double>(w[i]) * (row / d) : row / d;
        });
  }
  return sum;
}

}  // namespace

template <class Scalar>
double Loss<Scalar>::forward_backward(const T& pred, const T& target, const T& dpred, GradMode mode, int n,
                                      double normaliser, const float* weights) const {
  return row_losses(kind_, smoothing_, pred, target, dpred, true, mode == GradMode::accumulate, n, normaliser,
                    weights);
}

template <class Scalar>
double Loss<Scalar>::forward(const T& pred, const T& target, int n, const float* weights) const {
  return row_losses(kind_, smoothing_, pred, target, T(), false, false, n, 1.0, weights);
}

template <class Scalar>
long long count_top_k_hits(const Tensor<Scalar>& logits, const Tensor<Scalar>& target, int n, int k) {
  if (n == 0) return 0;
  const auto y = logits.rows(n), t = target.rows(n);
  const int d = static_cast<int>(y.extent(1));
  long long hits = 0;
  Kokkos::parallel_reduce(
      "topk_hits", range(0, n),
      KOKKOS_LAMBDA(const int i, long long& h) {
        const int c = label_of(t(i, 0), d);
        // The label is in the top k when fewer than k logits beat it (ties count for the label).
        int better = 0;
        for (int j = 0; j < d; ++j) better += y(i, j) > y(i, c) ? 1 : 0;
        h += better < k ? 1 : 0;
      },
      hits);
  return hits;
}

template <class Scalar>
double top_k_hit_weight(const Tensor<Scalar>& logits, const Tensor<Scalar>& target, int n, int k, const float* w) {
  if (!w) return static_cast<double>(count_top_k_hits(logits, target, n, k));
  if (n == 0) return 0.0;
  const auto y = logits.rows(n), t = target.rows(n);
  const int d = static_cast<int>(y.extent(1));
  return sum_over(
      "topk_hit_weight", 0, n, KOKKOS_LAMBDA(const int i, double& h) {
        const int c = label_of(t(i, 0), d);
        int better = 0;
        for (int j = 0; j < d; ++j) better += y(i, j) > y(i, c) ? 1 : 0;
        h += better < k ? static_cast<double>(w[i]) : 0.0;
      });
}

template <class Scalar>
long long first_bad_label(const Tensor<Scalar>& target, int n, int classes) {
  if (n == 0) return -1;
  const auto t = target.rows(n);
  long long first = n;
  Kokkos::parallel_reduce(
      "bad_labels", range(0, n),
      KOKKOS_LAMBDA(const int i, long long& f) {
        const Scalar v = t(i, 0);
        const bool ok = v >= Scalar(0) && v < Scalar(classes) &&
                        static_cast<Scalar>(static_cast<long long>(v)) == v;
        if (!ok && i < f) f = i;
      },
      Kokkos::Min<long long>(first));
  // The Min reducer starts from its identity (the largest long long), not from `first`.
  return first >= n ? -1 : first;
}

namespace {
template <class Scalar>
double sse_and_grad(const Tensor<Scalar>& y, const Tensor<Scalar>& t, const Tensor<Scalar>& dy, int n,
                    double global_samples) {
  // The sum of squared errors (not divided by d): Loss returns per-sample means, times d.
  const Loss<Scalar> loss(LossKind::mse);
  const double d = static_cast<double>(y.cols());
  return dy.empty() ? loss.forward(y, t, n) * d
                    : loss.forward_backward(y, t, dy, GradMode::assign, n, global_samples) * d;
}
}  // namespace

double mse_forward_backward(const Tensor<float>& y, const Tensor<float>& t, const Tensor<float>& dy, int n,
                            double global_samples) {
  return sse_and_grad(y, t, dy, n, global_samples);
}
double mse_forward_backward(const Tensor<double>& y, const Tensor<double>& t, const Tensor<double>& dy, int n,
                            double global_samples) {
  return sse_and_grad(y, t, dy, n, global_samples);
}
double squared_error_sum(const Tensor<float>& y, const Tensor<float>& t, int n) {
  return sse_and_grad(y, t, Tensor<float>(), n, 1.0);
}
double squared_error_sum(const Tensor<double>& y, const Tensor<double>& t, int n) {
  return sse_and_grad(y, t, Tensor<double>(), n, 1.0);
}

#define HPCT_LOSS(S)                                                                               \
  template class Loss<S>;                                                                          \
  template long long count_top_k_hits<S>(const Tensor<S>&, const Tensor<S>&, int, int);            \
  template double top_k_hit_weight<S>(const Tensor<S>&, const Tensor<S>&, int, int, const float*); \
  template long long first_bad_label<S>(const Tensor<S>&, int, int);
HPCT_LOSS(float)
HPCT_LOSS(double)
#undef HPCT_LOSS

}  // namespace hpct::nn
