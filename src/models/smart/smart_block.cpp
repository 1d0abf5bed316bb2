// SmartBlock: norms, edge attention, residuals and the feed-forward (see smart_block.hpp).
// Kernel labels stay within 15 characters: longer ones allocate a std::string per launch (kokkos_compat.hpp).
#include "models/smart/smart_block.hpp"

#include "nn/elementwise.hpp"

namespace hpct::smart {

SmartBlock::SmartBlock(nn::ParameterStore<float>& store, nn::Workspace<float>& ws, const std::string& name,
                       const Config& c)
    : c_(c) {
  const int H = c.hidden;
  const Shape dst{c.max_dst, H};
  // Registration in forward order (Note [registration order], nn/parameters.hpp).
  if (c.bipartite)
    ln_src_ = std::make_unique<nn::LayerNorm<float>>(store, ws, name + "/ln_src", Shape{c.max_src, H}, 1e-5,
                                                     c.precision);
  ln_dst_ = std::make_unique<nn::LayerNorm<float>>(store, ws, name + "/ln_dst", dst, 1e-5, c.precision);
  ln_r_ = std::make_unique<nn::LayerNorm<float>>(store, ws, name + "/ln_r", Shape{c.max_edges, H}, 1e-5,
                                                 c.precision);
  nn::EdgeAttention<float>::Config ac;
  ac.hidden = H, ac.heads = c.heads, ac.head_dim = H / c.heads, ac.has_r = true;
  ac.max_edges = c.max_edges, ac.max_src = c.bipartite ? c.max_src : c.max_dst, ac.max_dst = c.max_dst;
  ac.precision = c.precision, ac.rel_scratch = c.rel_scratch;
  attn_ = std::make_unique<nn::EdgeAttention<float>>(store, ws, name + "/attn", ac);
  shared_norm_ = nn::EdgeAttention<float>::folds(ac);
  for (std::size_t i = 0; i < store.tensors().size(); ++i) {
    if (store.tensors()[i].name == name + "/ln_r/weight") ln_r_w_ = i;
    if (store.tensors()[i].name == name + "/ln_r/bias") ln_r_b_ = i;
  }
  ln_post_ = std::make_unique<nn::LayerNorm<float>>(store, ws, name + "/ln_post", dst, 1e-5, c.precision);
  ln_ff_pre_ = std::make_unique<nn::LayerNorm<float>>(store, ws, name + "/ln_ff_pre", dst, 1e-5, c.precision);
  const int cap = static_cast<int>(c.max_dst);
  ff1_ = std::make_unique<nn::Linear<float>>(store, ws, name + "/ff1", H, 4 * H, cap, nn::Activation::relu,
                                             c.precision);
  drop_ = std::make_unique<nn::Dropout<float>>(ws, name + "/drop", Shape{c.max_dst, 4 * H}, c.dropout, c.seed, 1,
                                               c.precision);
  ff2_ = std::make_unique<nn::Linear<float>>(store, ws, name + "/ff2", 4 * H, H, cap, nn::Activation::identity,
                                             c.precision);
  ln_ff_post_ = std::make_unique<nn::LayerNorm<float>>(store, ws, name + "/ln_ff_post", dst, 1e-5, c.precision);
  // Note [scratch units] (nn/workspace.hpp): in SmartModel every block is a unit. The backward's
  // gradients live within one backward call; the outputs of ln_post and ln_ff_post (LayerNorms
  // without ReLU, whose backward reads their input) and of ff1 (its ReLU's backward reads z, the
  // dropout's nothing) only until the residual adds and the dropout have read them.
  ws.to_scratch(ln_post_->output()), ws.to_scratch(ln_ff_post_->output()), ws.to_scratch(ff1_->output());
  h_ = &ws.request(name + "/h", c.max_dst, H);
  y_ = &ws.request(name + "/y", c.max_dst, H);
  dh_ = &ws.request_scratch(name + "/dh", c.max_dst, H);
  dtmp_ = &ws.request_scratch(name + "/dtmp", c.max_dst, H);
  da_ = &ws.request_scratch(name + "/da", c.max_dst, H);
  dwide_ = &ws.request_scratch(name + "/dwide", c.max_dst, 4 * H);
  dwide2_ = &ws.request_scratch(name + "/dwide2", c.max_dst, 4 * H);
  if (c.bipartite) dxs_ = &ws.request_scratch(name + "/dxs", c.max_src, H);
  dxd_ = &ws.request_scratch(name + "/dxd", c.max_dst, H);
  dr_ = &ws.request_scratch(name + "/dr", c.max_edges, H);
}

void SmartBlock::bind(const nn::ParameterStore<float>& store) {
  if (ln_src_) ln_src_->bind(store);
  ln_dst_->bind(store), ln_r_->bind(store), attn_->bind(store), ln_post_->bind(store), ln_ff_pre_->bind(store);
  ff1_->bind(store), ff2_->bind(store), ln_ff_post_->bind(store);
  store_ = &store;
  if (shared_norm_) {
    nn::RelNorm<float> n;
    n.gamma = store.vector(ln_r_w_), n.beta = store.vector(ln_r_b_);
    n.dgamma = store.grad_vector(ln_r_w_), n.dbeta = store.grad_vector(ln_r_b_);
    attn_->set_rel_norm(n);
  }
}

void SmartBlock::set_batch(std::uint64_t epoch, const View1<std::uint64_t>& dst_keys, bool training) {
  drop_->set_batch(epoch, dst_keys);
  drop_->set_training(training);
  // SMART's attn_drop: the attention weights dropped with the same p, from their own stream.
  attn_->set_dropout(training ? c_.dropout : 0.0,
                     nn::Dropout<float>::epoch_key(rng::hash(c_.seed, 0x6174746e64726f70ull), epoch), dst_keys);
}

void SmartBlock::add(const T& a, const T& b, const T& y, int n, bool accumulate) {
  const auto am = a.matrix(), bm = b.matrix(), ym = y.matrix();
  nn::for_each_cell(
      "smart_block_add", n, static_cast<int>(ym.extent(1)), KOKKOS_LAMBDA(const int i, const int j) {
        ym(i, j) = accumulate ? ym(i, j) + am(i, j) : am(i, j) + bm(i, j);
      });
}

const SmartBlock::T& SmartBlock::edge_input(const T& r, int edges) {
  if (shared_norm_) return r;  // r: the kind's xhat
  ln_r_->forward(r, edges);
  return ln_r_->output();
}

void SmartBlock::feed_forward(const T& x_dst, int nd) {
  ln_post_->forward(attn_->output(), nd);
  add(x_dst, ln_post_->output(), *h_, nd, false);
  ln_ff_pre_->forward(*h_, nd);
  ff1_->forward(ln_ff_pre_->output(), nd);
  drop_->forward(ff1_->output(), nd);
  ff2_->forward(drop_->output(), nd);
  ln_ff_post_->forward(ff2_->output(), nd);
  add(*h_, ln_ff_post_->output(), *y_, nd, false);
}

void SmartBlock::forward(const T& x_src, const T& x_dst, const T& r) {
  const int nd = static_cast<int>(n_dst_), ne = static_cast<int>(attn_->core().edges());
  ln_dst_->forward(x_dst, nd);
  const T& xd = ln_dst_->output();
  const T* xs = &xd;
  if (c_.bipartite) {
    ln_src_->forward(x_src, static_cast<int>(n_src_));
    xs = &ln_src_->output();
  }
  attn_->forward(*xs, xd, edge_input(r, ne));
  feed_forward(x_dst, nd);
}

void SmartBlock::forward_cached(const T& x_src, const T& x_dst, const T& r, const T& k, const T& v,
                                std::int64_t row0, bool new_sources) {
  const int nd = static_cast<int>(n_dst_), ne = static_cast<int>(attn_->core().edges());
  ln_dst_->forward(x_dst, nd);
  const T& xd = ln_dst_->output();
  if (!c_.bipartite) {
    attn_->project_sources(xd, nd, k, v, row0);
  } else if (new_sources) {
    ln_src_->forward(x_src, static_cast<int>(n_src_));
    attn_->project_sources(ln_src_->output(), static_cast<int>(n_src_), k, v, 0);
  }
  attn_->forward_cached(k, v, xd, edge_input(r, ne));
  feed_forward(x_dst, nd);
}

void SmartBlock::backward(const T& x_src, const T& x_dst, const T& r, const T& dy, const T& dx_src,
                          GradMode mode_src, const T& dx_dst, const T& dr, GradMode mode_r) {
  const int nd = static_cast<int>(n_dst_), ne = static_cast<int>(attn_->core().edges());
  const GradMode assign = GradMode::assign;
  ln_ff_post_->backward(ff2_->output(), dy, *dtmp_, assign, nd);
  ff2_->backward(drop_->output(), *dtmp_, *dwide_, assign, nd);
  drop_->backward(ff1_->output(), *dwide_, *dwide2_, assign, nd);
  ff1_->backward(ln_ff_pre_->output(), *dwide2_, *dtmp_, assign, nd);
  ln_ff_pre_->backward(*h_, *dtmp_, *dh_, assign, nd);
  add(dy, dy, *dh_, nd, true);  // the residual: dh += dy
  ln_post_->backward(attn_->output(), *dh_, *da_, assign, nd);
  const T& xd = ln_dst_->output();
  // Shared norm: the attention writes d xhat into dr itself and the gain and bias gradients.
  const T& ra = shared_norm_ ? r : ln_r_->output();
  const T& dra = shared_norm_ ? dr : *dr_;
  const GradMode mode_ra = shared_norm_ ? mode_r : assign;
  if (c_.bipartite) {
    attn_->backward(ln_src_->output(), xd, ra, *da_, *dxs_, assign, *dxd_, assign, dra, mode_ra);
  } else {  // Note [self-attention gradients] (edge_attention.hpp): one input gradient
    attn_->backward(xd, xd, ra, *da_, *dxd_, GradMode::accumulate, *dxd_, assign, dra, mode_ra);
  }
  if (shared_norm_) store_->report_ready(ln_r_w_, ln_r_b_);  // as ln_r's backward would
  else ln_r_->backward(r, *dr_, dr, mode_r, ne);
  ln_dst_->backward(x_dst, *dxd_, dx_dst, assign, nd);
  add(*dh_, *dh_, dx_dst, nd, true);  // dx_dst += dh
  if (c_.bipartite) ln_src_->backward(x_src, *dxs_, dx_src, mode_src, static_cast<int>(n_src_));
}

}  // namespace hpct::smart
