// EdgeSoftmax: multi-head attention over an edge list, the parameter-free core of EdgeAttention and
// CausalAttention. For every edge e = (src j -> dst i) and head h (columns [h D, h D + D)):
//   score(e, h) = scale * sum_d q(i, hD+d) * (k(j, hD+d) + kr(e, hD+d))
//   a(e, .)     = softmax of score over the incoming edges of i (per head)
//   out(i, hD+d) = sum over incoming e of a(e, h) * (v(j, hD+d) + vr(e, hD+d))
// kr and vr (per-edge relative-position terms) are optional. A destination without incoming edges
// gets 0 (torch_geometric's softmax + scatter-sum does the same).
//
// Note [segment softmax without atomics]: edges are grouped by destination once per edge set with
// IndexGroups (a stable counting sort), and one work item per (destination, head) walks its edges in
// ascending edge order: max, exp-sum, weighted sum, all in registers and in a fixed order. The
// backward does the same for dq, writes per-edge key/value gradients (one writer per element), and
// sums those into sources through a second grouping by source (sum_groups), so no float atomic is
// used anywhere and results do not depend on threads, ranks or backends
// (Note [deterministic index sums], index_groups.hpp).
//
// Note [attention-weight dropout]: with set_dropout(p, ...) in training, out(i) sums
// a(e, h) * keep(e, h) / (1 - p) * (v + vr) (PyTorch's dropout on the attention weights, SMART's
// attn_drop); keep(e, h) is a pure function of (key, the destination's key, the edge's ordinal among
// the destination's incoming edges, h), so the mask depends on the sample and node, never on ranks,
// batch split or threads. attention() keeps the weights before dropout; backward draws the same mask.
//
// Note [folded relative projections]: EdgeAttention's relative-position terms are projections of one
// per-edge input r [edges, R], kr = r Wk^T and vr = r Wv^T + bv. Computing them costs four
// [edges, R] x [R, heads D] GEMMs a step (forward, dW, dr for each), the largest GEMMs of SMART, as
// edges outnumber nodes 10-20x. forward_rel/backward_rel (edge_softmax_rel.cpp) fold them into the
// destination side instead, per head h with Wk_h, Wv_h the head's D rows:
//   score(e, h) = scale (q_ih . k_jh + qr_ih . r_e),   qr_ih = Wk_h^T q_ih        [R]
//   out_ih      = sum_e w_eh v_jh + Wv_h ragg_ih + bv_h wsum_ih,
//                 ragg_ih = sum_e w_eh r_e, wsum_ih = sum_e w_eh   (w: the weights after dropout)
// and backward likewise (gv_ih = Wv_h^T dout_ih; dr_e = sum_h ds_eh qr_ih + w_eh gv_ih; dWk_h += q_h^T rs_h
// with rs_ih = sum_e ds_eh r_e; dWv_h += dout_h^T ragg_h; dq_ih += Wk_h rs_ih): the per-node products
// are batched GEMMs over heads (nn/gemm_batched.hpp) on [destinations, R] blocks, the per-edge work is
// 5-7 R-long dot products and axpys per head, and no [edges, heads D] tensor exists. The same sums
// in another order than PyTorch's, so parity holds to rounding (1e-5 relative, parity_smart_torch).
// The [destinations, heads R] products live in RelScratch, which a model shares between all its
// layers (one layer's forward or backward runs at a time).
#pragma once

#include <string>
#include <vector>

#include "nn/layer.hpp"
#include "nn/layers/index_groups.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

// Note [folded relative projections]: four [rows, heads R] tensors, shareable between layers.
template <class Scalar>
struct RelScratch {
  Tensor<Scalar>*qr = nullptr, *gv = nullptr, *ragg = nullptr, *rs = nullptr;
  static RelScratch request(Workspace<Scalar>& ws, const std::string& name, std::int64_t rows, std::int64_t width) {
    RelScratch s;
    s.qr = &ws.request(name + "/qr", rows, width), s.gv = &ws.request(name + "/gv", rows, width);
    s.ragg = &ws.request(name + "/ragg", rows, width), s.rs = &ws.request(name + "/rs", rows, width);
    return s;
  }
};

// Note [shared edge normalisation]: with gamma set, forward_rel/backward_rel take r as xhat, the
// parameter-free LayerNorm of the relative embedding that every block of one edge kind shares, and
// apply the block's own LayerNorm gain and bias inside: qr.r = (qr * gamma).xhat + qr.beta,
// sum_e w r_e = gamma * sum_e w xhat_e + beta sum_e w; dr becomes d xhat = gamma * dr, and
// dgamma = sum_e dr_e * xhat_e, dbeta = sum_e dr_e come from the per-destination sums the backward
// forms anyway (sum_ih qr_ih * sum_e ds xhat_e + gv_ih * sum_e w xhat_e, and the same with the sums
// of ds and w). So no block normalises, or back-propagates through a norm of, [edges, hidden] rows.
template <class Scalar>
struct RelNorm {
  using Vector = typename ParameterStore<Scalar>::Vector;
  Vector gamma, beta, dgamma, dbeta;  // gamma empty: r is used as it is
};

template <class Scalar>
class EdgeSoftmax {
 public:
  using T = Tensor<Scalar>;
  // Up to max_edges edges between up to max_src sources and max_dst destinations; `heads` heads of
  // `head_dim` columns each (q, k, v, kr, vr and out have heads * head_dim columns).
  // rel_dim > 0: the layer runs forward_rel/backward_rel (Note [folded relative projections]) and
  // has no dk_edge()/dv_edge().
  EdgeSoftmax(Workspace<Scalar>& ws, const std::string& name, int heads, int head_dim, std::int64_t max_edges,
              std::int64_t max_src, std::int64_t max_dst, Precision precision = Precision::fp32, int rel_dim = 0);
  // The edge set: edge e goes from src[e] in [0, n_src) to dst[e] in [0, n_dst). Outside the step;
  // it groups on the host into buffers allocated in the constructor (no allocation here).
  void set_edges(const std::vector<int>& src, const std::vector<int>& dst, std::int64_t n_src, std::int64_t n_dst);
  // The same from m edges in host arrays (a data path's own buffers: nothing is allocated).
  void set_edges(const int* src, const int* dst, std::int64_t m, std::int64_t n_src, std::int64_t n_dst);

  // Attention-weight dropout for the next forward/backward (Note [attention-weight dropout]): p = 0
  // switches it off; dst_keys holds a key per destination row.
  void set_dropout(double p, std::uint64_t key, const View1<std::uint64_t>& dst_keys) {
    drop_p_ = p, drop_key_ = key, drop_keys_ = dst_keys;
  }
  // out() rows [0, n_dst). kr, vr may be empty (no relative-position term).
  void forward(const T& q, const T& k, const T& v, const T& kr, const T& vr);
  // From dout (rows [0, n_dst)): dq assigned or accumulated (mode_q) and dk, dv ASSIGNED (rows
  // [0, n_src)); empty ones are skipped. The per-edge gradients of k + kr and v + vr are left in
  // dk_edge() and dv_edge() (rows [0, edges())): they are dkr and dvr.
  void backward(const T& q, const T& k, const T& v, const T& kr, const T& vr, const T& dout, const T& dq,
                GradMode mode_q, const T& dk, const T& dv);

  // Note [folded relative projections]: kr = r wk^T, vr = r wv^T + bv inside the kernels; wk, wv
  // [heads D, R], bv [heads D] (fp32 or double compute only).
  using Matrix = typename T::Matrix;
  using Vector = typename ParameterStore<Scalar>::Vector;
  void forward_rel(const T& q, const T& k, const T& v, const T& r, const Matrix& wk, const Matrix& wv,
                   const Vector& bv, const RelScratch<Scalar>& s, const RelNorm<Scalar>& norm = {});
  // dq as backward(); dk, dv assigned; dr assigned or accumulated (mode_r); dwk, dwv, dbv accumulated.
  void backward_rel(const T& q, const T& k, const T& v, const T& r, const Matrix& wk, const Matrix& wv,
                    const Vector& bv, const T& dout, const T& dq, GradMode mode_q, const T& dk, const T& dv,
                    const T& dr, GradMode mode_r, const Matrix& dwk, const Matrix& dwv, const Vector& dbv,
                    const RelScratch<Scalar>& s, const RelNorm<Scalar>& norm = {});

  const T& output() const { return *out_; }
  const T& dk_edge() const { return *dk_edge_; }
  const T& dv_edge() const { return *dv_edge_; }
  const T& attention() const { return *attn_; }  // [edges, heads]: a(e, h) of the last forward
  std::int64_t edges() const { return by_dst_.positions(); }
  std::int64_t sources() const { return by_src_.num_keys(); }
  std::int64_t destinations() const { return by_dst_.num_keys(); }
  int heads() const { return heads_; }
  int head_dim() const { return head_dim_; }

 private:
  std::string name_;
  int heads_, head_dim_;
  Precision precision_;
  IndexGroups by_dst_, by_src_;      // keys(): dst resp. src of every edge
  std::string what_dst_, what_src_;  // for the errors of build(), made once: set_edges allocates nothing
  T* attn_ = nullptr;                // [max_edges, heads]
  T* dscore_ = nullptr;              // [max_edges, heads]: dL/dscore (scale folded in)
  T* out_ = nullptr;                 // [max_dst, heads * head_dim]
  T* dk_edge_ = nullptr;             // [max_edges, heads * head_dim]
  T* dv_edge_ = nullptr;
  T* wdrop_ = nullptr;   // rel: [max_edges, heads], the weights after dropout
  T* wsum_ = nullptr;    // rel: [max_dst, heads], their sums
  T* rowdot_ = nullptr;  // rel: [max_dst, heads], sum_e a da of the backward
  T* cst_ = nullptr;     // rel: [max_dst, heads], qr.beta (forward); gv.beta, then sum_e ds (backward)
  double drop_p_ = 0;
  std::uint64_t drop_key_ = 0;
  View1<std::uint64_t> drop_keys_;
};

}  // namespace hpct::nn
