// EdgeSoftmax with the relative-position projections folded into the destination side
// (Note [folded relative projections], edge_softmax.hpp): forward_rel and backward_rel.
#include <cmath>
#include <type_traits>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/elementwise.hpp"
#include "nn/gemm_batched.hpp"
#include "nn/layers/edge_softmax.hpp"
#include "nn/layers/edge_softmax_blocked.hpp"
#include "nn/layers/edge_softmax_detail.hpp"

namespace hpct::nn {

namespace {

using edge_detail::axpy;
using edge_detail::dot_lanes;
using edge_detail::drop_draw;
using edge_detail::DropDraw;


// out[:, h R, +R) = x[:, h D, +D) w[h D, +D) for every head h (x [n, H D], w [H D, R], out [n, H R]).
template <class S>
void heads_to_rel(const S* x, const S* w, S* out, int n, int H, int D, int R) {
  gemm_batched<S>('N', 'N', n, R, D, S(1), Strided<const S>{x, H * D, 0, D},
                  Strided<const S>{w, R, 0, static_cast<std::int64_t>(D) * R}, S(0), Strided<S>{out, H * R, 0, R},
                  1, H);
}
// y[:, h D, +D) (+)= z[:, h R, +R) w[h D, +D)^T.
template <class S>
void rel_to_heads(const S* z, const S* w, S beta, S* y, int n, int H, int D, int R) {
  gemm_batched<S>('N', 'T', n, D, R, S(1), Strided<const S>{z, H * R, 0, R},
                  Strided<const S>{w, R, 0, static_cast<std::int64_t>(D) * R}, beta, Strided<S>{y, H * D, 0, D}, 1,
                  H);
}
// dw[h D, +D) += x[:, h D, +D)^T z[:, h R, +R).
template <class S>
void rel_weight_grad(const S* x, const S* z, S* dw, int n, int H, int D, int R) {
  if (n <= 0) return;
  gemm_batched<S>('T', 'N', D, R, n, S(1), Strided<const S>{x, H * D, 0, D}, Strided<const S>{z, H * R, 0, R}, S(1),
                  Strided<S>{dw, R, 0, static_cast<std::int64_t>(D) * R}, 1, H);
}


// Note [shared edge normalisation]: z_ih *= gamma, with cst(i, h) = z_ih . beta first when asked.
template <class S>
void scale_heads(const Tensor<S>& z, const RelNorm<S>& norm, const Tensor<S>& cst, int nd, int H, int R) {
  const auto zm = z.matrix(), c = cst.empty() ? zm : cst.matrix();
  const auto gamma = norm.gamma, beta = norm.beta;
  const bool want_c = !cst.empty();
  Kokkos::parallel_for(
      "edge_rel_scale", range(0, nd), KOKKOS_LAMBDA(const int i) {
        for (int h = 0; h < H; ++h) {
          S* zr = &zm(i, h * R);
          if (want_c) c(i, h) = dot_lanes(zr, &beta(0), R);
          for (int k = 0; k < R; ++k) zr[k] *= gamma(k);
        }
      });
}

// z_ih = gamma * z_ih + beta * count(i, h): a sum over edges of xhat into the same sum of r.
template <class S>
void affine_sums(const Tensor<S>& z, const RelNorm<S>& norm, const Tensor<S>& count, int nd, int H, int R) {
  const auto zm = z.matrix(), cm = count.matrix();
  const auto gamma = norm.gamma, beta = norm.beta;
  Kokkos::parallel_for(
      "edge_rel_affine", range(0, nd), KOKKOS_LAMBDA(const int i) {
        for (int h = 0; h < H; ++h) {
          S* zr = &zm(i, h * R);
          for (int k = 0; k < R; ++k) zr[k] = gamma(k) * zr[k] + beta(k) * cm(i, h);
        }
      });
}

// dgamma_k += sum_ih qr_ih,k rs_ih,k + gv_ih,k ragg_ih,k and dbeta_k += sum_ih qr_ih,k dssum_ih +
// gv_ih,k wsum_ih, with the unscaled qr, gv and the sums over xhat; in destination order. Then
// rs and ragg become the sums of r (affine_sums with dssum resp. wsum); returns false where the
// caller has to run those two itself.
template <class S>
bool norm_param_grads(const RelScratch<S>& s, const Tensor<S>& dssum, const Tensor<S>& wsum, const RelNorm<S>& norm,
                      int nd, int H, int R) {
  const auto qr = s.qr->matrix(), gv = s.gv->matrix(), rs = s.rs->matrix(), ragg = s.ragg->matrix();
  const auto ds = dssum.matrix(), ws = wsum.matrix();
  const auto dgamma = norm.dgamma, dbeta = norm.dbeta, gamma = norm.gamma, beta = norm.beta;
  if constexpr (kHostBackend) {
    // Note [gain sums by column chunks]: a work item per column k walks column c = h R + k of four
    // [nd, H R] matrices, so on the host every element read pulls in a cache line of which it
    // uses one float, and the R work items read the 4 nd H R floats R times over (a tenth of
    // SMART's step). Here a work item owns kChunk adjacent columns (one cache line of each row)
    // with kChunk sums in registers: every sum adds the same terms in the same (i, h) order as the
    // loop below, so the same bits. Note [affine sums with the gain sums]: the work item then
    // turns the rs and ragg elements it has just read into gamma x + beta count, affine_sums()'
    // expression, so those two passes over [nd, H R] rows are not needed either.
    constexpr int kChunk = 16;
    Kokkos::parallel_for(
        "edge_rel_dnormh", range(0, (R + kChunk - 1) / kChunk), KOKKOS_LAMBDA(const int chunk) {
          const int k0 = chunk * kChunk, nk = R - k0 < kChunk ? R - k0 : kChunk;
          S g[kChunk] = {}, b[kChunk] = {}, gk[kChunk] = {}, bk[kChunk] = {};
          for (int k = 0; k < nk; ++k) gk[k] = gamma(k0 + k), bk[k] = beta(k0 + k);
          for (int i = 0; i < nd; ++i)
            for (int h = 0; h < H; ++h) {
              const int c0 = h * R + k0;
              const S *q = &qr(i, c0), *v = &gv(i, c0);
              S *r = &rs(i, c0), *a = &ragg(i, c0);
              const S dsv = ds(i, h), wsv = ws(i, h);
              for (int k = 0; k < nk; ++k) {
                g[k] += q[k] * r[k] + v[k] * a[k];
                b[k] += q[k] * dsv + v[k] * wsv;
                r[k] = gk[k] * r[k] + bk[k] * dsv;
                a[k] = gk[k] * a[k] + bk[k] * wsv;
              }
            }
          for (int k = 0; k < nk; ++k) dgamma(k0 + k) += g[k], dbeta(k0 + k) += b[k];
        });
    return true;
  }
  Kokkos::parallel_for(
      "edge_rel_dnorm", range(0, R), KOKKOS_LAMBDA(const int k) {
        S g = S(0), b = S(0);
        for (int i = 0; i < nd; ++i)
          for (int h = 0; h < H; ++h) {
            const int c = h * R + k;
            g += qr(i, c) * rs(i, c) + gv(i, c) * ragg(i, c);
            b += qr(i, c) * ds(i, h) + gv(i, c) * ws(i, h);
          }
        dgamma(k) += g;
        dbeta(k) += b;
      });
  return false;
}


template <class S>
void check_scratch(const RelScratch<S>& s, std::int64_t rows, std::int64_t width, const std::string& name) {
  if (!s.qr || s.qr->rows() < rows || s.qr->cols() != width)
    throw Error("internal: " + name + ": the folded relative-position scratch holds fewer than " +
                std::to_string(rows) + " rows of " + std::to_string(width));
}

}  // namespace

template <class Scalar>
void EdgeSoftmax<Scalar>::forward_rel(const T& q, const T& k, const T& v, const T& r, const Matrix& wk,
                                      const Matrix& wv, const Vector& bv, const RelScratch<Scalar>& s,
                                      const RelNorm<Scalar>& norm) {
  const int nd = static_cast<int>(destinations()), H = heads_, D = head_dim_, R = static_cast<int>(r.cols());
  if (!wdrop_) throw Error("internal: " + name_ + ": forward_rel on a layer built without rel_dim");
  check_scratch(s, nd, static_cast<std::int64_t>(H) * R, name_);
  heads_to_rel(q.data(), wk.data(), s.qr->data(), nd, H, D, R);
  const bool affine = norm.gamma.data() != nullptr;
  // Note [shared edge normalisation]; the blocked kernels scale qr themselves (Note [shared norm
  // scaled in the kernel], edge_softmax_blocked.hpp).
  const bool blocked = std::is_same<Scalar, float>::value && kHostBackend && edge_blocked::usable(H, R);
  if (affine && !blocked) scale_heads(*s.qr, norm, *cst_, nd, H, R);
  const Matrix qm = q.matrix(), km = k.matrix(), vm = v.matrix(), rm = r.matrix(), qr = s.qr->matrix(),
               ragg = s.ragg->matrix(), a = attn_->matrix(), out = out_->matrix(), wd = wdrop_->matrix(),
               wsum = wsum_->matrix(), cst = cst_->matrix();
  const auto offsets = by_dst_.offsets(), order = by_dst_.order(), src = by_src_.keys();
  const Scalar scale = Scalar(1) / static_cast<Scalar>(std::sqrt(static_cast<double>(D)));
  const DropDraw<Scalar> dd = drop_draw<Scalar>(drop_p_, drop_key_, drop_keys_, nd, name_);
  const bool drop = dd.on;
  if constexpr (std::is_same<Scalar, float>::value) {
    if (blocked) {  // Note [register-blocked edge kernels]
      edge_blocked::FwArgs p;
      p.D = D, p.R = R, p.scale = scale, p.affine = affine;
      p.q = q.data(), p.k = k.data(), p.v = v.data(), p.r = r.data(), p.qr = s.qr->data();
      p.gamma = affine ? norm.gamma.data() : nullptr, p.beta = affine ? norm.beta.data() : nullptr;
      p.bv = bv.data(), p.offsets = offsets.data(), p.order = order.data(), p.src = src.data();
      p.a = attn_->data(), p.wd = wdrop_->data(), p.wsum = wsum_->data(), p.out = out_->data();
      p.ragg = s.ragg->data();
      edge_blocked::forward(nd, H, p, dd);  // ragg with the shared norm applied
      rel_to_heads(s.ragg->data(), wv.data(), Scalar(1), out_->data(), nd, H, D, R);
      return;
    }
  }
  // One work item per destination, all heads: every edge's r row is read once per pass.
  Kokkos::parallel_for(
      "edge_rel_fw", range(0, nd), KOKKOS_LAMBDA(const int i) {
        const int begin = offsets(i), end = offsets(i + 1);
        for (int o = begin; o < end; ++o) {
          const int e = order(o), j = src(e);
          for (int h = 0; h < H; ++h)
            a(e, h) = scale * (dot_lanes(&qm(i, h * D), &km(j, h * D), D) + dot_lanes(&qr(i, h * R), &rm(e, 0), R) +
                               (affine ? cst(i, h) : Scalar(0)));
        }
        for (int h = 0; h < H; ++h) {
          Scalar m = Scalar(0), sum = Scalar(0);
          for (int o = begin; o < end; ++o)
            if (o == begin || a(order(o), h) > m) m = a(order(o), h);
          for (int o = begin; o < end; ++o) {
            const Scalar p = exp_vectorisable(a(order(o), h) - m);
            a(order(o), h) = p;
            sum += p;
          }
          for (int o = begin; o < end; ++o) a(order(o), h) = a(order(o), h) / sum;
          wsum(i, h) = Scalar(0);
        }
        for (int c = 0; c < H * D; ++c) out(i, c) = Scalar(0);
        for (int c = 0; c < H * R; ++c) ragg(i, c) = Scalar(0);
        for (int o = begin; o < end; ++o) {
          const int e = order(o), j = src(e);
          for (int h = 0; h < H; ++h) {
            const Scalar w = drop ? a(e, h) * dd.factor(i, o - begin, h, H) : a(e, h);
            wd(e, h) = w;
            wsum(i, h) += w;
            axpy(w, &vm(j, h * D), &out(i, h * D), D);
            axpy(w, &rm(e, 0), &ragg(i, h * R), R);
          }
        }
        for (int h = 0; h < H; ++h)
          for (int d = 0; d < D; ++d) out(i, h * D + d) += bv(h * D + d) * wsum(i, h);
      });
  if (affine) affine_sums(*s.ragg, norm, *wsum_, nd, H, R);
  rel_to_heads(s.ragg->data(), wv.data(), Scalar(1), out_->data(), nd, H, D, R);
}

template <class Scalar>
void EdgeSoftmax<Scalar>::backward_rel(const T& q, const T& k, const T& v, const T& r, const Matrix& wk,
                                       const Matrix& wv, const Vector& bv, const T& dout, const T& dq,
                                       GradMode mode_q, const T& dk, const T& dv, const T& dr, GradMode mode_r,
                                       const Matrix& dwk, const Matrix& dwv, const Vector& dbv,
                                       const RelScratch<Scalar>& s, const RelNorm<Scalar>& norm) {
  const int nd = static_cast<int>(destinations()), H = heads_, D = head_dim_, R = static_cast<int>(r.cols());
  check_scratch(s, nd, static_cast<std::int64_t>(H) * R, name_);
  // qr again (the scratch is shared between layers), and gv = Wv_h^T dout_h.
  heads_to_rel(q.data(), wk.data(), s.qr->data(), nd, H, D, R);
  heads_to_rel(dout.data(), wv.data(), s.gv->data(), nd, H, D, R);
  const bool affine = norm.gamma.data() != nullptr;
  const bool want_dr = !dr.empty();
  // The blocked kernels keep qr and gv unscaled (Note [shared norm scaled in the kernel]).
  const bool blocked = std::is_same<Scalar, float>::value && kHostBackend && edge_blocked::usable(H, R) &&
                       (!want_dr || dr.cols() == R);
  if (affine && !blocked) scale_heads(*s.qr, norm, T(), nd, H, R), scale_heads(*s.gv, norm, *cst_, nd, H, R);
  const Matrix qm = q.matrix(), km = k.matrix(), vm = v.matrix(), rm = r.matrix(), qr = s.qr->matrix(),
               gv = s.gv->matrix(), ragg = s.ragg->matrix(), rs = s.rs->matrix(), a = attn_->matrix(),
               ds = dscore_->matrix(), wd = wdrop_->matrix(), rowdot = rowdot_->matrix(), g = dout.matrix(),
               cst = cst_->matrix();
  const bool want_dq = !dq.empty(), acc_q = mode_q == GradMode::accumulate, acc_r = mode_r == GradMode::accumulate;
  const Matrix dqm = want_dq ? dq.matrix() : qm, drm = want_dr ? dr.matrix() : rm;
  const auto offsets = by_dst_.offsets(), order = by_dst_.order(), src = by_src_.keys();
  const Scalar scale = Scalar(1) / static_cast<Scalar>(std::sqrt(static_cast<double>(D)));
  const DropDraw<Scalar> dd = drop_draw<Scalar>(drop_p_, drop_key_, drop_keys_, nd, name_);
  const bool drop = dd.on;
  if constexpr (std::is_same<Scalar, float>::value) {
    if (blocked) {  // Note [register-blocked edge kernels]
      edge_blocked::BwArgs p;
      p.D = D, p.R = R, p.scale = scale, p.affine = affine, p.want_dq = want_dq, p.acc_q = acc_q;
      p.want_dr = want_dr, p.acc_r = acc_r;
      p.gamma = affine ? norm.gamma.data() : nullptr, p.beta = affine ? norm.beta.data() : nullptr;
      p.g = dout.data(), p.v = v.data(), p.k = k.data(), p.r = r.data(), p.qr = s.qr->data(), p.gv = s.gv->data();
      p.a = attn_->data(), p.bv = bv.data(), p.offsets = offsets.data(), p.order = order.data(), p.src = src.data();
      p.ds = dscore_->data(), p.wd = wdrop_->data(), p.rowdot = rowdot_->data(), p.cst = cst_->data();
      p.dq = want_dq ? dq.data() : nullptr, p.rs = s.rs->data(), p.ragg = s.ragg->data();
      p.dr = want_dr ? dr.data() : nullptr;
      edge_blocked::backward(nd, H, p, dd);
    }
  }
  // Per destination: da = dout . (v + vr) times the dropout mask (forward_rel's draw again),
  // dscore = scale a (da - sum a da); then dq's key part, rs, ragg and dr of every incoming edge.
  if (!blocked)
    Kokkos::parallel_for(
        "edge_rel_bw", range(0, nd), KOKKOS_LAMBDA(const int i) {
          const int begin = offsets(i), end = offsets(i + 1);
          for (int h = 0; h < H; ++h) rowdot(i, h) = Scalar(0);
          for (int h = 0; h < H; ++h) {
            // dout_h . bv_h: the bias part of every edge's value
            const Scalar gb = dot_lanes(&g(i, h * D), &bv(h * D), D);
            for (int o = begin; o < end; ++o) {
              const int e = order(o), j = src(e);
              Scalar da = dot_lanes(&g(i, h * D), &vm(j, h * D), D) + dot_lanes(&gv(i, h * R), &rm(e, 0), R) + gb +
                          (affine ? cst(i, h) : Scalar(0));
              if (drop) da *= dd.factor(i, o - begin, h, H);
              ds(e, h) = da;
              rowdot(i, h) += a(e, h) * da;
            }
          }
          if (want_dq && !acc_q)
            for (int c = 0; c < H * D; ++c) dqm(i, c) = Scalar(0);
          for (int c = 0; c < H * R; ++c) rs(i, c) = Scalar(0), ragg(i, c) = Scalar(0);
          if (affine)
            for (int h = 0; h < H; ++h) cst(i, h) = Scalar(0);  // from here: sum_e ds
          for (int o = begin; o < end; ++o) {
            const int e = order(o), j = src(e);
            Scalar* dre = want_dr ? &drm(e, 0) : nullptr;
            if (want_dr && !acc_r)
              for (int c = 0; c < R; ++c) dre[c] = Scalar(0);
            for (int h = 0; h < H; ++h) {
              const Scalar dsv = scale * a(e, h) * (ds(e, h) - rowdot(i, h));
              const Scalar w = drop ? wd(e, h) : a(e, h);
              ds(e, h) = dsv;
              if (affine) cst(i, h) += dsv;
              if (want_dq) axpy(dsv, &km(j, h * D), &dqm(i, h * D), D);
              axpy(dsv, &rm(e, 0), &rs(i, h * R), R);
              axpy(w, &rm(e, 0), &ragg(i, h * R), R);
              if (want_dr) {
                axpy(dsv, &qr(i, h * R), dre, R);
                axpy(w, &gv(i, h * R), dre, R);
              }
            }
          }
        });
  if (affine) {      // rs, ragg hold sums of xhat: the gain and bias gradients, then the sums of r
    if (!blocked) {  // the generic kernel ran on scaled qr and gv: the unscaled ones again
      heads_to_rel(q.data(), wk.data(), s.qr->data(), nd, H, D, R);
      heads_to_rel(dout.data(), wv.data(), s.gv->data(), nd, H, D, R);
    }
    if (!norm_param_grads(s, *cst_, *wsum_, norm, nd, H, R)) {
      affine_sums(*s.rs, norm, *cst_, nd, H, R);
      affine_sums(*s.ragg, norm, *wsum_, nd, H, R);
    }
  }
  if (want_dq) rel_to_heads(s.rs->data(), wk.data(), Scalar(1), dq.data(), nd, H, D, R);
  rel_weight_grad(q.data(), s.rs->data(), dwk.data(), nd, H, D, R);
  rel_weight_grad(dout.data(), s.ragg->data(), dwv.data(), nd, H, D, R);
  // dbv_c += sum_i dout(i, c) wsum(i, h(c)), in node order.
  const Matrix wsum = wsum_->matrix();
  Kokkos::parallel_for(
      "edge_rel_dbv", range(0, H * D), KOKKOS_LAMBDA(const int c) {
        Scalar acc = Scalar(0);
        for (int i = 0; i < nd; ++i) acc += g(i, c) * wsum(i, c / D);
        dbv(c) += acc;
      });
  // Keys and values by source, in ascending edge order per source (Note [segment softmax without atomics]).
  const auto s_offsets = by_src_.offsets(), s_order = by_src_.order(), dst = by_dst_.keys();
  const bool want_dk = !dk.empty(), want_dv = !dv.empty();
  const Matrix dkm = want_dk ? dk.matrix() : qm, dvm = want_dv ? dv.matrix() : qm;
  if constexpr (std::is_same<Scalar, float>::value) {
    if (kHostBackend && edge_blocked::source_usable(H, D)) {  // Note [register-blocked edge kernels]
      edge_blocked::SrcArgs p;
      p.D = D, p.want_dk = want_dk, p.want_dv = want_dv;
      p.q = qm.data(), p.g = g.data(), p.ds = ds.data(), p.w = drop ? wd.data() : a.data();
      p.offsets = s_offsets.data(), p.order = s_order.data(), p.dst = dst.data();
      p.dk = want_dk ? dkm.data() : nullptr, p.dv = want_dv ? dvm.data() : nullptr;
      edge_blocked::by_source(static_cast<int>(sources()), H, p);
      return;
    }
  }
  Kokkos::parallel_for(
      "edge_rel_src", range(0, static_cast<int>(sources())), KOKKOS_LAMBDA(const int j) {
        for (int c = 0; c < H * D; ++c) {
          if (want_dk) dkm(j, c) = Scalar(0);
          if (want_dv) dvm(j, c) = Scalar(0);
        }
        for (int o = s_offsets(j); o < s_offsets(j + 1); ++o) {
          const int e = s_order(o), i = dst(e);
          for (int h = 0; h < H; ++h) {
            if (want_dk) axpy(ds(e, h), &qm(i, h * D), &dkm(j, h * D), D);
            if (want_dv) axpy(drop ? wd(e, h) : a(e, h), &g(i, h * D), &dvm(j, h * D), D);
          }
        }
      });
}

// The two members of this file, for both scalar types (edge_softmax.cpp instantiates the rest).
template <class S>
using M = typename Tensor<S>::Matrix;
template <class S>
using Vec = typename ParameterStore<S>::Vector;
#define HPCT_EDGE_SOFTMAX_REL(S)                                                                             \
  template void EdgeSoftmax<S>::forward_rel(const Tensor<S>&, const Tensor<S>&, const Tensor<S>&,            \
                                            const Tensor<S>&, const M<S>&, const M<S>&, const Vec<S>&,       \
                                            const RelScratch<S>&, const RelNorm<S>&);                        \
  template void EdgeSoftmax<S>::backward_rel(const Tensor<S>&, const Tensor<S>&, const Tensor<S>&,           \
                                             const Tensor<S>&, const M<S>&, const M<S>&, const Vec<S>&,      \
                                             const Tensor<S>&, const Tensor<S>&, GradMode, const Tensor<S>&, \
                                             const Tensor<S>&, const Tensor<S>&, GradMode, const M<S>&,      \
                                             const M<S>&, const Vec<S>&, const RelScratch<S>&, const RelNorm<S>&);
HPCT_EDGE_SOFTMAX_REL(float)
HPCT_EDGE_SOFTMAX_REL(double)
#undef HPCT_EDGE_SOFTMAX_REL

}  // namespace hpct::nn
