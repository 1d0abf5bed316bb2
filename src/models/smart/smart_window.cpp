// `model smart` in rollouts: forwards over a window of token steps with a key/value cache per
// agent block (Note [incremental rollouts] in smart_model.hpp).
#include "core/error.hpp"
#include "models/smart/smart_model.hpp"

namespace hpct::smart {

void SmartModel::rollout_window(int from, int to, int copies) {
  if (from != 0 && from != rollout_next_)
    throw Error("internal: smart: a rollout window must start at 0 or where the last ended", ExitCode::failure);
  if (to < from) throw Error("internal: smart: an empty rollout window", ExitCode::failure);
  if (copies < 1 || (from != 0 && copies != rollout_copies_))
    throw Error("internal: smart: a rollout keeps its number of copies per scene", ExitCode::failure);
  rollout_copies_ = copies;
  if (keys_.empty()) {
    const auto H = static_cast<std::size_t>(config_.hidden);
    for (std::size_t k = 0; k < agent_blocks_.size(); ++k) {
      const std::size_t rows = k % 3 == 1 ? map_feat_.extent(0) : token_in_.extent(0);  // sources
      keys_.emplace_back("smart_rollout_keys", rows, H), values_.emplace_back("smart_rollout_values", rows, H);
    }
  }
  rollout_from_ = from, rollout_to_ = to, rollout_next_ = to + 1;
}

// Note [incremental rollouts]: the window's rows alone. Self-attention blocks append the window's
// keys and values to their cache; map -> agent blocks project the map once, in the first window.
void SmartModel::forward_window() {
  const SceneGraph& g = *graph_;
  const std::int64_t row0 = window_row0_, n = g.agents - row0;
  const int rows = static_cast<int>(n);
  const bool first = rollout_from_ == 0;
  const Tensor<float> none;
  const Tensor<float>& xm = first ? encode_map() : none;
  embed_->forward(Tensor<float>(token_in_.data() + row0, Shape{n}), rows);
  embed_edges();
  const Tensor<float>* xa = &embed_->output();
  for (std::size_t k = 0; k < agent_blocks_.size(); ++k) {
    SmartBlock& blk = *agent_blocks_[k];
    const Tensor<float> keys = rows_of(keys_[k]), values = rows_of(values_[k]);
    if (k % 3 == 1) blk.forward_cached(xm, *xa, edge_input(2), keys, values, 0, first);
    else blk.forward_cached(*xa, *xa, edge_input(k % 3 == 0 ? 1 : 3), keys, values, row0, true);
    xa = &blk.output();
  }
  head1_->forward(*xa, rows);
  head2_->forward(head1_->output(), rows);
}

}  // namespace hpct::smart
