// EdgeSoftmax kernels (see edge_softmax.hpp).
#include "nn/layers/edge_softmax.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "nn/elementwise.hpp"
#include "nn/layers/edge_softmax_detail.hpp"

namespace hpct::nn {

// Note [attention-weight dropout]'s draw, the one the folded kernels (edge_softmax_rel.cpp) take.
using edge_detail::drop_draw;
using edge_detail::DropDraw;

template <class Scalar>
EdgeSoftmax<Scalar>::EdgeSoftmax(Workspace<Scalar>& ws, const std::string& name, int heads, int head_dim,
                                 std::int64_t max_edges, std::int64_t max_src, std::int64_t max_dst,
                                 Precision precision, int rel_dim)
    : name_(name),
      heads_(heads),
      head_dim_(head_dim),
      precision_(precision),
      by_dst_(name + "/by_dst", max_edges, max_dst),
      by_src_(name + "/by_src", max_edges, max_src),
      what_dst_(name + " (edge attention) destinations"),
      what_src_(name + " (edge attention) sources") {
  const std::int64_t width = static_cast<std::int64_t>(heads) * head_dim;
  attn_ = &ws.request(name + "/attn", max_edges, heads);
  dscore_ = &ws.request_scratch(name + "/dscore", max_edges, heads);  // Note [scratch units]
  out_ = &ws.request(name + "/out", max_dst, width);
  if (rel_dim > 0) {  // Note [folded relative projections]: no per-edge key/value gradients
    wdrop_ = &ws.request(name + "/wdrop", max_edges, heads);
    wsum_ = &ws.request(name + "/wsum", max_dst, heads);
    rowdot_ = &ws.request_scratch(name + "/rowdot", max_dst, heads);
    cst_ = &ws.request(name + "/cst", max_dst, heads);
  } else {
    dk_edge_ = &ws.request_scratch(name + "/dk_edge", max_edges, width);
    dv_edge_ = &ws.request_scratch(name + "/dv_edge", max_edges, width);
  }
}

template <class Scalar>
void EdgeSoftmax<Scalar>::set_edges(const std::vector<int>& src, const std::vector<int>& dst, std::int64_t n_src,
                                    std::int64_t n_dst) {
  if (src.size() != dst.size())
    throw Error("internal: " + name_ + ": " + std::to_string(src.size()) + " edge sources but " +
                std::to_string(dst.size()) + " destinations");
  set_edges(src.data(), dst.data(), static_cast<std::int64_t>(src.size()), n_src, n_dst);
}

template <class Scalar>
void EdgeSoftmax<Scalar>::set_edges(const int* src, const int* dst, std::int64_t m, std::int64_t n_src,
                                    std::int64_t n_dst) {
  // Copy only what fits: a list over capacity is build()'s capacity error.
  if (m <= by_dst_.max_positions()) {
    std::copy(dst, dst + m, by_dst_.host_keys().data());
    std::copy(src, src + m, by_src_.host_keys().data());
  }
  by_dst_.build(m, n_dst, what_dst_);
  by_src_.build(m, n_src, what_src_);
}

template <class Scalar>
void EdgeSoftmax<Scalar>::forward(const T& q, const T& k, const T& v, const T& kr, const T& vr) {
  using M = typename T::Matrix;
  const bool has_kr = !kr.empty(), has_vr = !vr.empty();
  const M qm = q.matrix(), km = k.matrix(), vm = v.matrix();
  const M krm = has_kr ? kr.matrix() : km, vrm = has_vr ? vr.matrix() : vm;
  const M a = attn_->matrix(), out = out_->matrix();
  const auto offsets = by_dst_.offsets(), order = by_dst_.order(), src = by_src_.keys();
  const int D = head_dim_;
  const Scalar scale = Scalar(1) / static_cast<Scalar>(std::sqrt(static_cast<double>(D)));
  const DropDraw<Scalar> dd = drop_draw<Scalar>(drop_p_, drop_key_, drop_keys_, destinations(), name_);
  const bool drop = dd.on;
  const int H = heads_;
  // One work item per (destination, head): Note [segment softmax without atomics].
  for_each_cell(
      "edge_softmax_fw", static_cast<int>(destinations()), heads_, KOKKOS_LAMBDA(const int i, const int h) {
        const int begin = offsets(i), end = offsets(i + 1), c0 = h * D;
        Scalar m = Scalar(0);
        for (int o = begin; o < end; ++o) {
          const int e = order(o), j = src(e);
          Scalar s = Scalar(0);
          for (int d = 0; d < D; ++d) s += qm(i, c0 + d) * (km(j, c0 + d) + (has_kr ? krm(e, c0 + d) : Scalar(0)));
          s *= scale;
          a(e, h) = s;
          if (o == begin || s > m) m = s;
        }
        Scalar sum = Scalar(0);
        for (int o = begin; o < end; ++o) {
          const int e = order(o);
          const Scalar p = exp_vectorisable(a(e, h) - m);
          a(e, h) = p;
          sum += p;
        }
        for (int d = 0; d < D; ++d) out(i, c0 + d) = Scalar(0);
        for (int o = begin; o < end; ++o) {
          const int e = order(o), j = src(e);
          const Scalar p = a(e, h) / sum;
          a(e, h) = p;
          const Scalar w = drop ? p * dd.factor(i, o - begin, h, H) : p;
          for (int d = 0; d < D; ++d) out(i, c0 + d) += w * (vm(j, c0 + d) + (has_vr ? vrm(e, c0 + d) : Scalar(0)));
        }
      });
  round_values(precision_, out_->data(), destinations() * heads_ * head_dim_);
}

template <class Scalar>
void EdgeSoftmax<Scalar>::backward(const T& q, const T& k, const T& v, const T& kr, const T& vr, const T& dout,
                                   const T& dq, GradMode mode_q, const T& dk, const T& dv) {
  using M = typename T::Matrix;
  const bool has_kr = !kr.empty(), has_vr = !vr.empty();
  const M qm = q.matrix(), km = k.matrix(), vm = v.matrix();
  const M krm = has_kr ? kr.matrix() : km, vrm = has_vr ? vr.matrix() : vm;
  const M a = attn_->matrix(), ds = dscore_->matrix(), g = dout.matrix();
  const auto offsets = by_dst_.offsets(), order = by_dst_.order(), src = by_src_.keys(), dst = by_dst_.keys();
  const int D = head_dim_;
  const Scalar scale = Scalar(1) / static_cast<Scalar>(std::sqrt(static_cast<double>(D)));
  const bool want_dq = !dq.empty(), acc_q = mode_q == GradMode::accumulate;
  const M dqm = want_dq ? dq.matrix() : qm;
  const DropDraw<Scalar> dd = drop_draw<Scalar>(drop_p_, drop_key_, drop_keys_, destinations(), name_);
  const bool drop = dd.on;
  const int H = heads_;
  const M dve = dv_edge_->matrix();
  // Per (destination, head): da(e) = dout . (v + vr) (times the dropout mask), dscore =
  // scale * a (da - sum a da), then dq; with dropout also the value gradients, a keep g.
  for_each_cell(
      "edge_softmax_bw", static_cast<int>(destinations()), heads_, KOKKOS_LAMBDA(const int i, const int h) {
        const int begin = offsets(i), end = offsets(i + 1), c0 = h * D;
        Scalar dot = Scalar(0);
        for (int o = begin; o < end; ++o) {
          const int e = order(o), j = src(e);
          Scalar da = Scalar(0);
          for (int d = 0; d < D; ++d) da += g(i, c0 + d) * (vm(j, c0 + d) + (has_vr ? vrm(e, c0 + d) : Scalar(0)));
          if (drop) {
            const Scalar keep = dd.factor(i, o - begin, h, H);
            da *= keep;
            for (int d = 0; d < D; ++d) dve(e, c0 + d) = a(e, h) * keep * g(i, c0 + d);
          }
          ds(e, h) = da;
          dot += a(e, h) * da;
        }
        for (int o = begin; o < end; ++o) {
          const int e = order(o);
          ds(e, h) = scale * a(e, h) * (ds(e, h) - dot);
        }
        if (want_dq) {
          for (int d = 0; d < D; ++d) {
            Scalar s = acc_q ? dqm(i, c0 + d) : Scalar(0);
            for (int o = begin; o < end; ++o) {
              const int e = order(o), j = src(e);
              s += ds(e, h) * (km(j, c0 + d) + (has_kr ? krm(e, c0 + d) : Scalar(0)));
            }
            dqm(i, c0 + d) = s;
          }
        }
      });
  // Per edge and column: the gradients of k + kr and v + vr (one writer per element).
  const M dke = dk_edge_->matrix();
  for_each_cell(
      "edge_sm_bw_e", static_cast<int>(edges()), heads_ * D, KOKKOS_LAMBDA(const int e, const int c) {
        const int i = dst(e), h = c / D;
        dke(e, c) = ds(e, h) * qm(i, c);
        if (!drop) dve(e, c) = a(e, h) * g(i, c);
      });
  const std::int64_t span = edges() * heads_ * head_dim_;
  round_values(precision_, dk_edge_->data(), span);
  round_values(precision_, dv_edge_->data(), span);
  // Into the sources, in ascending edge order per source.
  const int n_src = static_cast<int>(sources());
  if (!dk.empty()) sum_groups("edge_softmax_dk", dk_edge_->matrix(), by_src_, dk.rows(n_src), false);
  if (!dv.empty()) sum_groups("edge_softmax_dv", dv_edge_->matrix(), by_src_, dv.rows(n_src), false);
  if (want_dq) round_values(precision_, dq.data(), destinations() * heads_ * head_dim_);
}

template class EdgeSoftmax<float>;
template class EdgeSoftmax<double>;

}  // namespace hpct::nn
