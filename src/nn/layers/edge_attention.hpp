// EdgeAttention: SMART's sparse multi-head attention over an edge list (its AttentionLayer's
// attention block, without the norms and the feed-forward that a model block puts around it):
//   q = to_q(x_dst), k = to_k(x_src), v = to_v(x_src), kr = to_k_r(r), vr = to_v_r(r) (r per edge)
//   agg = EdgeSoftmax(q, k + kr, v + vr)        (softmax per destination over its incoming edges)
//   g   = sigmoid(to_g([agg, x_dst])),  u = agg + g * (to_s(x_dst) - agg)
//   y   = to_out(u)                              [n_dst, hidden]
// Without a relative-position input (has_r false) kr and vr are absent. Parameters under
// "<name>/to_q/weight" etc., the names of SMART's module, so a torch state dict maps one to one.
// to_k and to_k_r have no bias, as in SMART: a key bias adds q . b to every score of a destination,
// which cancels in the softmax (its gradient would be 0).
//
// With a relative-position input, fp32 or double compute and a host backend, kr and vr are never
// formed: the core folds to_k_r and to_v_r into the destination side (Note [folded relative
// projections], edge_softmax.hpp); the parameters are the same. Device builds keep the projections
// over edges (their kernels are one work item per destination and head), and bf16/fp16 keep them
// for the rounding points of Note [low precision on host builds].
//
// Note [key/value cache]: an autoregressive caller (SMART's rollouts) whose sources keep their
// values from one forward to the next keeps their keys and values: project_sources writes the keys
// and values of new source rows into its own k and v tensors at a row offset, and forward_cached
// attends from new destination rows over all of them; with the edges' destinations numbered among the
// new rows only, each forward then projects and attends for the new rows alone. forward() is
// forward_cached over the layer's own projections of every source (the same kernels, so the same
// numbers row by row). Inference only: the backward reads the last forward()'s projections.
//
// Note [self-attention gradients]: backward writes every destination gradient (gate, to_s, to_q)
// before any source gradient (to_k, to_v). Self-attention (x_src == x_dst) may therefore pass the
// same tensor as dx_dst and dx_src with mode_src = accumulate.
// Obeys Note [the gradient rule] (nn/layer.hpp) with its own signatures.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/layers/concat.hpp"
#include "nn/layers/edge_softmax.hpp"
#include "nn/layers/linear.hpp"

namespace hpct::nn {

template <class Scalar>
class EdgeAttention {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  struct Config {
    int hidden = 128, heads = 8, head_dim = 16;
    bool has_r = true;  // a relative-position embedding [edges, hidden] is added to keys and values
    std::int64_t max_edges = 0, max_src = 0, max_dst = 0;
    Precision precision = Precision::fp32;
    // Note [folded relative projections]: scratch shared with a model's other layers ([max_dst, heads
    // * hidden] or more rows); null: the layer requests its own.
    RelScratch<Scalar>* rel_scratch = nullptr;
  };
  // Whether a layer of this configuration folds its relative projections (and needs RelScratch).
  static bool folds(const Config& c) { return c.has_r && kHostBackend && c.precision == Precision::fp32; }
  EdgeAttention(Store& store, Workspace<Scalar>& ws, const std::string& name, const Config& config);
  void bind(const Store& store);
  // Outside the step (see EdgeSoftmax::set_edges).
  void set_edges(const std::vector<int>& src, const std::vector<int>& dst, std::int64_t n_src, std::int64_t n_dst) {
    core_.set_edges(src, dst, n_src, n_dst);
  }
  void set_edges(const int* src, const int* dst, std::int64_t m, std::int64_t n_src, std::int64_t n_dst) {
    core_.set_edges(src, dst, m, n_src, n_dst);
  }

  // Folded layers only: r is a shared xhat and the norm's gain and bias apply inside (Note [shared
  // edge normalisation], edge_softmax.hpp); views into the parameter store, set after bind.
  void set_rel_norm(const RelNorm<Scalar>& norm) { norm_ = norm; }
  // Attention-weight dropout (Note [attention-weight dropout], edge_softmax.hpp).
  void set_dropout(double p, std::uint64_t key, const View1<std::uint64_t>& dst_keys) {
    core_.set_dropout(p, key, dst_keys);
  }
  // y rows [0, n_dst) from x_src rows [0, n_src), x_dst rows [0, n_dst), r rows [0, edges) (or empty).
  void forward(const T& x_src, const T& x_dst, const T& r);
  void backward(const T& x_src, const T& x_dst, const T& r, const T& dy, const T& dx_src, GradMode mode_src,
                const T& dx_dst, GradMode mode_dst, const T& dr, GradMode mode_r);
  // Note [key/value cache]: keys and values of x_src's rows [0, n) into rows [row0, row0 + n) of k and v.
  void project_sources(const T& x_src, int n, const T& k, const T& v, std::int64_t row0);
  // forward() with every source's key and value read from k and v (rows [0, sources)).
  void forward_cached(const T& k, const T& v, const T& x_dst, const T& r);
  const T& output() const { return to_out_.output(); }
  const EdgeSoftmax<Scalar>& core() const { return core_; }
  const Config& config() const { return config_; }

  // u = agg + g (s - agg) with g = sigmoid(gz) kept in gate; and its backward. Public only because
  // nvcc allows no device lambda in a private member function.
  void blend_forward(int n);
  void blend_backward(const T& du, int n);

 private:
  Config config_;
  int n_src_ = 0, n_dst_ = 0;
  Linear<Scalar> to_k_, to_v_;
  std::unique_ptr<Linear<Scalar>> to_k_r_, to_v_r_;  // not folded only
  struct RelParams {
    std::size_t wk = 0, wv = 0, bv = 0;  // parameter indices of to_k_r/weight, to_v_r/weight, to_v_r/bias
  };
  static RelParams register_rel(Store& store, const std::string& name, const Config& c);
  bool fold_;
  RelParams rel_;  // folded only: registered here, in to_k_r's and to_v_r's place
  Linear<Scalar> to_q_;
  EdgeSoftmax<Scalar> core_;
  Linear<Scalar> to_s_;
  Concat<Scalar> cat_;
  Linear<Scalar> to_g_, to_out_;
  const Store* store_ = nullptr;
  typename Store::Matrix wk_, wv_, dwk_, dwv_;
  typename Store::Vector bv_, dbv_;
  RelScratch<Scalar> own_scratch_;
  RelNorm<Scalar> norm_;
  const RelScratch<Scalar>* scratch_ = nullptr;
  T* gate_ = nullptr;  // sigmoid(to_g(...)) [max_dst, width]
  T* u_ = nullptr;     // the blended aggregate, to_out's input
  T* du_ = nullptr;
  T* dagg_ = nullptr;
  T* dgz_ = nullptr;
  T* dcat_ = nullptr;
  T* ds_ = nullptr;
  T* dq_ = nullptr;
  T* dk_ = nullptr;
  T* dv_ = nullptr;
};

}  // namespace hpct::nn
