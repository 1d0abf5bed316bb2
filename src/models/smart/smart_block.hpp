// SmartBlock: one of SMART's attention layers around EdgeAttention (smart/layers/attention_layer.py):
//   xs = LN_src(x_src), xd = LN_dst(x_dst) (self-attention: one LN, xs = xd), r = LN_r(r)
//   h  = x_dst + LN_post(EdgeAttention(xs, xd, r))
//   y  = h + LN_ff_post(Linear(Dropout(ReLU(Linear(LN_ff_pre(h))))))   (4x hidden)
// Dropout is keyed per row by the node keys of the batch (Note [dropout keys] in nn/layers/dropout.hpp),
// so masks depend on (seed, epoch, scene, node), never on ranks or batch split.
#pragma once

#include <memory>
#include <string>

#include "nn/layers/dropout.hpp"
#include "nn/layers/edge_attention.hpp"
#include "nn/layers/layer_norm.hpp"

namespace hpct::smart {

using nn::GradMode;
template <class S>
using Tensor = hpct::Tensor<S>;

class SmartBlock {
 public:
  using T = Tensor<float>;
  struct Config {
    int hidden = 128, heads = 8;
    bool bipartite = false;
    double dropout = 0.1;
    std::uint64_t seed = 0;
    std::int64_t max_edges = 0, max_src = 0, max_dst = 0;
    nn::Precision precision = nn::Precision::fp32;  // the layers' compute precision (nn/precision.hpp)
    // Shared by all blocks of a model (Note [folded relative projections], nn/layers/edge_softmax.hpp).
    nn::RelScratch<float>* rel_scratch = nullptr;
  };
  SmartBlock(nn::ParameterStore<float>& store, nn::Workspace<float>& ws, const std::string& name, const Config& c);
  void bind(const nn::ParameterStore<float>& store);
  void set_edges(const int* src, const int* dst, std::int64_t m, std::int64_t n_src, std::int64_t n_dst) {
    n_src_ = n_src, n_dst_ = n_dst;
    attn_->set_edges(src, dst, m, n_src, n_dst);
  }
  void set_batch(std::uint64_t epoch, const View1<std::uint64_t>& dst_keys, bool training);
  // y rows [0, n_dst). Self-attention: x_src is x_dst.
  void forward(const T& x_src, const T& x_dst, const T& r);
  // Note [key/value cache] (nn/layers/edge_attention.hpp): forward() over the new destination rows
  // alone, with every source's key and value in k and v. Self-attention: the new rows are new
  // sources too, projected into rows [row0, row0 + n_dst) first (x_src is not read). Bipartite:
  // x_src's rows are projected into rows [0, n_src) when new_sources, else k and v hold them.
  void forward_cached(const T& x_src, const T& x_dst, const T& r, const T& k, const T& v, std::int64_t row0,
                      bool new_sources);
  // dx_dst assigned; dx_src (bipartite) and dr accumulated or assigned as asked.
  void backward(const T& x_src, const T& x_dst, const T& r, const T& dy, const T& dx_src, GradMode mode_src,
                const T& dx_dst, const T& dr, GradMode mode_r);
  const T& output() const { return *y_; }
  // Note [shared edge normalisation] (nn/layers/edge_softmax.hpp): true when r is the edge kind's
  // shared xhat (parameter-free LayerNorm of the relative embedding), which ln_r's gain and bias
  // then enter inside the attention; dr is then d xhat. False: r is the embedding itself.
  bool shares_edge_norm() const { return shared_norm_; }
  // y = a + b over rows [0, n). Public only because nvcc allows no device lambda in a private member function.
  static void add(const T& a, const T& b, const T& y, int n, bool accumulate);

 private:
  const T& edge_input(const T& r, int edges);  // what the attention takes as r
  void feed_forward(const T& x_dst, int n);    // the residuals, norms and feed-forward after the attention
  Config c_;
  bool shared_norm_ = false;
  std::size_t ln_r_w_ = 0, ln_r_b_ = 0;  // ln_r's parameter indices (shared norm)
  const nn::ParameterStore<float>* store_ = nullptr;
  std::int64_t n_src_ = 0, n_dst_ = 0;
  std::unique_ptr<nn::LayerNorm<float>> ln_src_, ln_dst_, ln_r_;
  std::unique_ptr<nn::EdgeAttention<float>> attn_;
  std::unique_ptr<nn::LayerNorm<float>> ln_post_, ln_ff_pre_;
  std::unique_ptr<nn::Linear<float>> ff1_;
  std::unique_ptr<nn::Dropout<float>> drop_;
  std::unique_ptr<nn::Linear<float>> ff2_;
  std::unique_ptr<nn::LayerNorm<float>> ln_ff_post_;
  T *h_ = nullptr, *y_ = nullptr, *dh_ = nullptr, *dtmp_ = nullptr, *dwide_ = nullptr, *dwide2_ = nullptr,
    *dxs_ = nullptr, *dxd_ = nullptr, *dr_ = nullptr, *da_ = nullptr;
};

}  // namespace hpct::smart
