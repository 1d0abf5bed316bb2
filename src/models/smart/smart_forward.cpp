// `model smart`: the forward over a batch's token graph, the label-smoothed token loss and the
// backward (see smart_model.hpp).
#include <algorithm>

#include "core/error.hpp"
#include "models/smart/edge_norm.hpp"
#include "models/smart/smart_model.hpp"
#include "nn/elementwise.hpp"

namespace hpct::smart {

const Tensor<float>& SmartModel::encode_map() {
  const SceneGraph& g = *graph_;
  const int nm = static_cast<int>(g.maps);
  map_in1_->forward(rows_of(map_feat_), nm);
  map_in2_->forward(map_in1_->output(), nm);
  r_mm_->forward(rows_of(rel_mm_), static_cast<int>(g.map_map.count));
  const Tensor<float>* xm = &map_in2_->output();
  if (shared_norm_ && !map_blocks_.empty())
    normalize_edges(r_mm_->output(), *xhat_[0], *rstd_[0], static_cast<int>(g.map_map.count));
  for (auto& blk : map_blocks_) {
    blk->forward(*xm, *xm, edge_input(0));
    xm = &blk->output();
  }
  return *xm;
}

void SmartModel::embed_edges() {
  const SceneGraph& g = *graph_;
  // Each embedding normalised right after it: its output is scratch (Note [scratch units]).
  const bool norm = shared_norm_ && !agent_blocks_.empty();
  r_t_->forward(rows_of(rel_t_), static_cast<int>(g.temporal.count));
  if (norm) normalize_edges(r_t_->output(), *xhat_[1], *rstd_[1], static_cast<int>(g.temporal.count));
  r_ma_->forward(rows_of(rel_ma_), static_cast<int>(g.map_agent.count));
  if (norm) normalize_edges(r_ma_->output(), *xhat_[2], *rstd_[2], static_cast<int>(g.map_agent.count));
  r_aa_->forward(rows_of(rel_aa_), static_cast<int>(g.agent_agent.count));
  if (norm) normalize_edges(r_aa_->output(), *xhat_[3], *rstd_[3], static_cast<int>(g.agent_agent.count));
}

double SmartModel::forward(const Batch& b, bool training) {
  upload(b);
  epoch_ = b.epoch;
  for (auto& blk : map_blocks_) blk->set_batch(epoch_, map_key_, training);
  for (auto& blk : agent_blocks_) blk->set_batch(epoch_, agent_key_, training);
  if (rollout_from_ >= 0) {  // Note [incremental rollouts]
    if (training) throw Error("internal: smart: a rollout window trains nothing", ExitCode::failure);
    forward_window();
    return 0.0;
  }
  const int na = static_cast<int>(graph_->agents);
  const Tensor<float>& xm = encode_map();
  embed_->forward(Tensor<float>(token_in_.data(), Shape{static_cast<std::int64_t>(token_in_.extent(0))}), na);
  embed_edges();
  const Tensor<float>* xa = &embed_->output();
  for (std::size_t k = 0; k < agent_blocks_.size(); ++k) {
    SmartBlock& blk = *agent_blocks_[k];
    if (k % 3 == 1) blk.forward(xm, *xa, edge_input(2));
    else blk.forward(*xa, *xa, edge_input(k % 3 == 0 ? 1 : 3));
    xa = &blk.output();
  }
  head1_->forward(*xa, na);
  head2_->forward(head1_->output(), na);
  return 0.0;
}

// Note [tokens per type]: motion_vocab is the width of the logits; a type given fewer tokens
// (motion_vocab_per_type) owns ids [0, count) and no others: its cross-entropy, label smoothing
// included, runs over its first count logits, so the ids past them carry no probability and get no
// gradient, and a rollout samples among its first count alone (rollout.cpp). The vocabulary never
// gives a type a token past its count, so targets and inputs stay inside. A node's type is in its
// input token (type * vocab + token). With every count motion_vocab the arithmetic is the plain
// cross-entropy's, bit for bit.
void SmartModel::token_loss(const Tensor<float>& dlogits, double scale) {
  const int na = static_cast<int>(graph_->agents), V = config_.vocab;
  const auto z = head2_->output().matrix(), d = dlogits.matrix();
  const bool grad = !dlogits.empty();
  const auto target = target_, weight = weight_, loss = node_loss_, token_in = token_in_;
  const double eps = config_.label_smoothing;
  const int c0 = vocab_.tokens(0), c1 = vocab_.tokens(1), c2 = vocab_.tokens(2);
  static_assert(kAgentTypes == 3, "one count per agent type");
  Kokkos::parallel_for(
      "smart_loss", range(0, na), KOKKOS_LAMBDA(const int i) {
        const int type = static_cast<int>(token_in(i)) / V;
        const int n = type == 0 ? c0 : type == 1 ? c1 : c2;  // the type's tokens
        double m = z(i, 0), mean = 0;
        for (int k = 0; k < n; ++k) m = z(i, k) > m ? z(i, k) : m, mean += z(i, k);
        double s = 0;
        for (int k = 0; k < n; ++k) s += kmath::exp(z(i, k) - m);
        const double lse = m + kmath::log(s);
        const int y = static_cast<int>(target(i));
        loss(i) = static_cast<float>(weight(i) * ((1 - eps) * (lse - z(i, y)) + eps * (lse - mean / n)));
        if (grad) {
          const double w = weight(i) * scale;
          for (int k = 0; k < n; ++k) {
            const double q = (k == y ? 1 - eps : 0.0) + eps / n;
            d(i, k) = static_cast<float>(w * (kmath::exp(z(i, k) - lse) - q));
          }
          for (int k = n; k < V; ++k) d(i, k) = 0.0f;
        }
      });
}

namespace {
double host_sum(const View1<float>& v, const HostView1<float>& h, std::int64_t n) {
  if (n <= 0) return 0.0;
  const auto r = Kokkos::make_pair(std::size_t(0), static_cast<std::size_t>(n));
  Kokkos::deep_copy(Kokkos::subview(h, r), Kokkos::subview(v, r));
  double s = 0;  // in node order: the same sum on every thread count
  for (std::int64_t i = 0; i < n; ++i) s += h(static_cast<std::size_t>(i));
  return s;
}
}  // namespace

double SmartModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  forward(b, false);
  token_loss(Tensor<float>(), 0.0);
  return host_sum(node_loss_, host_loss_, graph_->agents);
}

double SmartModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  forward(b, true);
  token_loss(*dlogits_, 1.0 / normaliser);
  backward();
  return host_sum(node_loss_, host_loss_, graph_->agents);
}

void SmartModel::backward() {
  const SceneGraph& g = *graph_;
  const int na = static_cast<int>(g.agents), nm = static_cast<int>(g.maps);
  const GradMode assign = GradMode::assign, acc = GradMode::accumulate;
  const Tensor<float> none;
  const std::size_t L = agent_blocks_.size();
  auto agent_input = [&](std::size_t k) -> const Tensor<float>& {
    return k == 0 ? embed_->output() : agent_blocks_[k - 1]->output();
  };
  const Tensor<float>& xm = map_blocks_.empty() ? map_in2_->output() : map_blocks_.back()->output();
  head2_->backward(head1_->output(), *dlogits_, *dh1_, assign, na);
  head1_->backward(agent_blocks_.back()->output(), *dh1_, *da_, assign, na);
  Tensor<float>*cur = da_, *other = db_;
  bool first_t = true, first_ma = true, first_aa = true;
  for (std::size_t k = L; k-- > 0;) {
    SmartBlock& blk = *agent_blocks_[k];
    const Tensor<float>& x = agent_input(k);
    if (k % 3 == 1) {
      blk.backward(xm, x, edge_input(2), *cur, *dm_, first_ma ? assign : acc, *other, *dr_ma_,
                   first_ma ? assign : acc);
      first_ma = false;
    } else if (k % 3 == 0) {
      blk.backward(x, x, edge_input(1), *cur, none, assign, *other, *dr_t_, first_t ? assign : acc);
      first_t = false;
    } else {
      blk.backward(x, x, edge_input(3), *cur, none, assign, *other, *dr_aa_, first_aa ? assign : acc);
      first_aa = false;
    }
    std::swap(cur, other);
  }
  if (shared_norm_ && L > 0) {  // d xhat -> d r (Note [shared edge normalisation])
    normalize_edges_backward(*dr_aa_, *xhat_[3], *rstd_[3], static_cast<int>(g.agent_agent.count));
    normalize_edges_backward(*dr_ma_, *xhat_[2], *rstd_[2], static_cast<int>(g.map_agent.count));
    normalize_edges_backward(*dr_t_, *xhat_[1], *rstd_[1], static_cast<int>(g.temporal.count));
  }
  r_aa_->backward(rows_of(rel_aa_), *dr_aa_, none, assign, static_cast<int>(g.agent_agent.count));
  r_ma_->backward(rows_of(rel_ma_), *dr_ma_, none, assign, static_cast<int>(g.map_agent.count));
  r_t_->backward(rows_of(rel_t_), *dr_t_, none, assign, static_cast<int>(g.temporal.count));
  embed_->backward(Tensor<float>(token_in_.data(), Shape{static_cast<std::int64_t>(token_in_.extent(0))}), *cur,
                   none, assign, na);
  // The map: dm holds what the map -> agent blocks sent back.
  Tensor<float>*mcur = dm_, *mother = dm2_;
  for (std::size_t k = map_blocks_.size(); k-- > 0;) {
    const Tensor<float>& x = k == 0 ? map_in2_->output() : map_blocks_[k - 1]->output();
    map_blocks_[k]->backward(x, x, edge_input(0), *mcur, none, assign, *mother, *dr_mm_,
                             k + 1 == map_blocks_.size() ? assign : acc);
    std::swap(mcur, mother);
  }
  if (shared_norm_ && !map_blocks_.empty())
    normalize_edges_backward(*dr_mm_, *xhat_[0], *rstd_[0], static_cast<int>(g.map_map.count));
  if (!map_blocks_.empty())
    r_mm_->backward(rows_of(rel_mm_), *dr_mm_, none, assign, static_cast<int>(g.map_map.count));
  map_in2_->backward(map_in1_->output(), *mcur, *mother, assign, nm);
  map_in1_->backward(rows_of(map_feat_), *mother, none, assign, nm);
}

}  // namespace hpct::smart
