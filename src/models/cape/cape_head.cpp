// The CAPE matching head's kernels (Note [cape head arithmetic] in cape_head.hpp). Free functions in
// a named namespace: CUDA's extended lambdas need an enclosing function with external linkage.
// Kernel labels stay within 15 characters (no heap allocation for the label, as in nn/layers).
#include "models/cape/cape_head.hpp"

#include <algorithm>
#include <cmath>

#include "nn/plane_loop.hpp"

namespace hpct::cape {

// Note [cape head loops]: the sums over channels and keypoints in double, each in the order the
// plain loops took, with the cells as the vectorised loop around them (one work item per channel
// with nn/plane_loop.hpp, not one per element with three integer divisions); dot products over
// cells as `omp simd` reductions. The softmax subtracts the largest similarity as rounded to float.
KOKKOS_INLINE_FUNCTION double dot_cells(const float* __restrict__ a, const float* __restrict__ b, int P) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int p = 0; p < P; ++p) s += static_cast<double>(a[p]) * b[p];
  return s;
}

// Note [cape head cell blocks]: a sum over rows (keypoints, channels) for every cell, out[p] =
// scale sum_j coef[j cs] rows[j rs + p], runs over blocks of kCellBlock cells with the block's
// double accumulators as the vector and the rows outside it: each cell sums in j order as the plain
// loop does (bitwise the same), but the loop over cells is the innermost, contiguous one. With the
// cell loop outside (omp simd over p around a loop over j reading rows with stride P) the compiler
// kept it scalar, one dependent double add per product: 1.1 ms of a 40 ms cape step for the
// similarities alone.
constexpr int kCellBlock = 16;
KOKKOS_INLINE_FUNCTION void sum_rows(float* __restrict__ out, const float* __restrict__ coef, int cs,
                                     const float* __restrict__ rows, std::int64_t rs, int J, std::int64_t p0,
                                     std::int64_t p1, double scale) {
  for (std::int64_t b = p0; b < p1; b += kCellBlock) {
    const int len = static_cast<int>(p1 - b < kCellBlock ? p1 - b : kCellBlock);
    double acc[kCellBlock];
    for (int i = 0; i < kCellBlock; ++i) acc[i] = 0;
    for (int j = 0; j < J; ++j) {
      const double cj = static_cast<double>(coef[static_cast<std::int64_t>(j) * cs]);
      const float* r = rows + j * rs + b;
      if (len == kCellBlock) {
#pragma omp simd
        for (int i = 0; i < kCellBlock; ++i) acc[i] += cj * r[i];
      } else {
        for (int i = 0; i < len; ++i) acc[i] += cj * r[i];
      }
    }
    for (int i = 0; i < len; ++i) out[b + i] = static_cast<float>(acc[i] * scale);
  }
}

// out[p] = sum_k w[k P + p] v[k D], p in [p0, p1).
KOKKOS_INLINE_FUNCTION void sum_over_keypoints(float* __restrict__ out, const float* __restrict__ w,
                                               const float* __restrict__ v, int K, int P, int D, std::int64_t p0,
                                               std::int64_t p1) {
  sum_rows(out, v, D, w, P, K, p0, p1, 1.0);
}

// pr[p] = scale sum_c fk[c] fq[c P + p] (rounded to float), for every cell p.
KOKKOS_INLINE_FUNCTION void similarities(float* __restrict__ pr, const float* __restrict__ fk,
                                         const float* __restrict__ fq, int D, int P, double scale) {
  sum_rows(pr, fk, 1, fq, P, D, 0, P, scale);
}

// Pooling weights a [n, K, P] at the support keypoints and target heatmaps h [n, K, P] at the query
// keypoints, each normalised to sum 1 over the cells.
void cape_maps(const View1<float>& a, const View1<float>& h, const float* kps, const float* kpq, int n, int K,
               int fh, int fw, double sigma) {
  const int P = fh * fw;
  Kokkos::parallel_for(
      "cape_maps", range(0, n * K), KOKKOS_LAMBDA(const int ik) {
        for (int which = 0; which < 2; ++which) {
          const float* kp = (which == 0 ? kps : kpq) + 3 * ik;
          float* out = (which == 0 ? a.data() : h.data()) + static_cast<std::size_t>(ik) * P;
          // In cells: the keypoint at (x w, y h), cell p's centre at (px + 0.5, py + 0.5).
          const double x = kp[0] * fw, y = kp[1] * fh;
          double sum = 0;
          for (int p = 0; p < P; ++p) {
            const int row = p / fw, col = p % fw;  // the cell's indices
            const double dx = col + 0.5 - x, dy = row + 0.5 - y;
            const double g = kmath::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma));
            sum += g;
            out[p] = static_cast<float>(g);
          }
          // Far outside the map every g underflows: then a uniform map (no keypoint lies there in practice).
          for (int p = 0; p < P; ++p) out[p] = sum > 0 ? static_cast<float>(out[p] / sum) : 1.0f / P;
        }
      });
}

// out [n, K, D] = sum_p w [n, K, P] x [n, D, P]: the support features pooled by the keypoint maps
// (forward, "cape_pool") and their gradient dL/df from ds and the query map (backward, "cape_dfeat").
void cape_keypoint_dots(const char* label, const View1<float>& out, const View1<float>& w, const float* x, int n,
                        int K, int D, int P) {
  Kokkos::parallel_for(
      label, range(0, n * K * D), KOKKOS_LAMBDA(const int ikc) {
        const int c = ikc % D, ik = ikc / D, i = ik / K;
        const float* wk = w.data() + static_cast<std::size_t>(ik) * P;
        const float* xc = x + (static_cast<std::size_t>(i) * D + c) * P;
        out(ikc) = static_cast<float>(dot_cells(wk, xc, P));
      });
}

// Per (episode, keypoint): similarity, softmax, soft-argmax, the keypoint's loss terms and, for
// backward, dL/dS (Note [cape loss]).
void cape_match(const View1<float>& prob, const View1<float>& ds, const View1<float>& pred,
                const View1<double>& lossk, const View1<float>& f, const View1<float>& h, const float* fq,
                const float* kps, const float* kpq, int n, int K, int D, int fh, int fw, double scale, double w_hm,
                bool gradients, double normaliser) {
  const int P = fh * fw;
  Kokkos::parallel_for(
      "cape_match", range(0, n * K), KOKKOS_LAMBDA(const int ik) {
        const int i = ik / K;
        float* pr = prob.data() + static_cast<std::size_t>(ik) * P;
        const float* fk = f.data() + static_cast<std::size_t>(ik) * D;
        const float* fqi = fq + static_cast<std::size_t>(i) * D * P;
        similarities(pr, fk, fqi, D, P, scale);
        double m = -1e300;
        for (int p = 0; p < P; ++p) m = pr[p] > m ? pr[p] : m;
        double z = 0;
        for (int p = 0; p < P; ++p) z += kmath::exp(static_cast<double>(pr[p]) - m);
        double px = 0, py = 0;
        for (int row = 0, p = 0; row < fh; ++row)  // cells in order, no divisions
          for (int col = 0; col < fw; ++col, ++p) {
            const double q = kmath::exp(static_cast<double>(pr[p]) - m) / z;
            pr[p] = static_cast<float>(q);
            px += q * (col + 0.5) / fw, py += q * (row + 0.5) / fh;
          }
        pred(2 * ik) = static_cast<float>(px), pred(2 * ik + 1) = static_cast<float>(py);
        // Visible in both images counts; M of the episode.
        const double vis = static_cast<double>(kps[3 * ik + 2]) * kpq[3 * ik + 2];
        int M = 0;
        for (int k = 0; k < K; ++k) M += kps[3 * (i * K + k) + 2] * kpq[3 * (i * K + k) + 2] > 0;
        const double ex = px - kpq[3 * ik], ey = py - kpq[3 * ik + 1];
        const float* hk = h.data() + static_cast<std::size_t>(ik) * P;
        double mse = 0;
        for (int p = 0; p < P; ++p)
          mse += (pr[p] - static_cast<double>(hk[p])) * (pr[p] - static_cast<double>(hk[p]));
        const double wk = M > 0 ? vis / M : 0.0;
        lossk(ik) = wk * (kmath::fabs(ex) + kmath::fabs(ey) + w_hm * mse);
        if (!gradients) return;
        float* d = ds.data() + static_cast<std::size_t>(ik) * P;
        const double g = wk / normaliser, sx = (ex > 0) - (ex < 0), sy = (ey > 0) - (ey < 0);
        double dot = 0;
        for (int row = 0, p = 0; row < fh; ++row)
          for (int col = 0; col < fw; ++col, ++p) {
            const double dp = g * (sx * (col + 0.5) / fw + sy * (row + 0.5) / fh +
                                   2 * w_hm * (pr[p] - static_cast<double>(hk[p])));
            d[p] = static_cast<float>(dp);
            dot += pr[p] * dp;
          }
        for (int p = 0; p < P; ++p) d[p] = static_cast<float>(pr[p] * (d[p] - dot) * scale);
      });
}

void cape_episode_loss(const View1<double>& loss, const View1<double>& lossk, int n, int K) {
  Kokkos::parallel_for(
      "cape_loss", range(0, n), KOKKOS_LAMBDA(const int i) {
        double s = 0;
        for (int k = 0; k < K; ++k) s += lossk(i * K + k);
        loss(i) = s;
      });
}

// out [n, D, P] = sum_k w [n, K, P] f [n, K, D]: the backward's map gradients, dfq from ds (which
// holds dL/dS times the scale already) and f ("cape_dquery"), dfs from the keypoint maps and df
// ("cape_dsupport").
void cape_keypoint_maps(const char* label, float* out, const View1<float>& w, const View1<float>& f, int n, int K,
                        int D, int P) {
  const float *wp = w.data(), *fp = f.data();
  nn::for_each_plane(
      label, static_cast<std::int64_t>(n) * D, P,
      KOKKOS_LAMBDA(const std::int64_t ic, const std::int64_t p0, const std::int64_t p1) {
        const std::int64_t i = ic / D, c = ic % D;
        sum_over_keypoints(out + ic * P, wp + i * K * P, fp + i * K * D + c, K, P, D, p0, p1);
      });
}

MatchingHead::MatchingHead(const HeadConfig& c, int capacity) : c_(c), capacity_(std::max(capacity, 1)) {
  const std::size_t nk = static_cast<std::size_t>(capacity_) * c.keypoints, P = std::size_t(c.height) * c.width;
  weights_ = View1<float>("cape_weights", nk * P);
  heat_ = View1<float>("cape_heat", nk * P);
  prob_ = View1<float>("cape_prob", nk * P);
  ds_ = View1<float>("cape_ds", nk * P);
  f_ = View1<float>("cape_f", nk * c.dim);
  df_ = View1<float>("cape_df", nk * c.dim);
  pred_ = View1<float>("cape_pred", nk * 2);
  lossk_ = View1<double>("cape_lossk", nk);
  loss_ = View1<double>("cape_loss", static_cast<std::size_t>(capacity_));
  loss_host_ = HostView1<double>("cape_loss_host", static_cast<std::size_t>(capacity_));
}

double MatchingHead::forward(const float* fs, const float* fq, const float* kp_support, const float* kp_query,
                             int n, bool gradients, double normaliser) {
  if (n == 0) return 0.0;
  const int K = c_.keypoints, D = c_.dim, P = c_.height * c_.width;
  cape_maps(weights_, heat_, kp_support, kp_query, n, K, c_.height, c_.width, c_.sigma);
  cape_keypoint_dots("cape_pool", f_, weights_, fs, n, K, D, P);
  cape_match(prob_, ds_, pred_, lossk_, f_, heat_, fq, kp_support, kp_query, n, K, D, c_.height, c_.width, c_.scale,
             c_.heatmap_weight, gradients, normaliser);
  cape_episode_loss(loss_, lossk_, n, K);
  Kokkos::deep_copy(loss_host_, loss_);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += loss_host_(i);  // in order: the same sum on every backend
  return sum;
}

void MatchingHead::backward(const float* fs, const float* fq, float* dfs, float* dfq, int n) const {
  (void)fs;
  if (n == 0) return;
  const int K = c_.keypoints, D = c_.dim, P = c_.height * c_.width;
  cape_keypoint_maps("cape_dquery", dfq, ds_, f_, n, K, D, P);
  cape_keypoint_dots("cape_dfeat", df_, ds_, fq, n, K, D, P);
  cape_keypoint_maps("cape_dsupport", dfs, weights_, df_, n, K, D, P);
}

}  // namespace hpct::cape
