// `model smart`: SMART (next motion-token prediction, issue 19) on trajgen scenes. A batch row is a
// scene (ragged fields agent_state, agent_type, map_polyline, map_type); SceneGraphBuilder turns the
// rows into token graphs, then:
//   map:    x_m = MLP(segment features); map_layers x SmartBlock over map -> map edges
//   agents: x_a = Embedding(type * vocab + token); agent_layers x [temporal block, map -> agent
//           block, agent <-> agent block], relative positions through one FourierEmbedding per
//           edge kind
//   head:   Linear(H, H) ReLU, Linear(H, vocab): logits of the next token of each (agent, step)
//   loss:   cross-entropy with label smoothing, a scene's loss the mean over its agent nodes.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "models/registry.hpp"
#include "models/smart/graph_prefetch.hpp"
#include "models/smart/scene_graph.hpp"
#include "models/smart/smart_block.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/layers/fourier_embedding.hpp"
#include "nn/layers/linear.hpp"

namespace hpct::smart {

struct SmartConfig {
  int hidden = 128, heads = 8, map_layers = 3, agent_layers = 6, vocab = 2048, freqs = 64;
  double dropout = 0.1, label_smoothing = 0.1;
  GraphLimits limits;  // scenes = capacity; max_agents, max_segments from the training data; the grid
  double step = 0.1, history = 1.0, future = 8.0;  // seconds (smart_step, smart_history, smart_future)
  bool fit_vocab = false;  // motion_vocab_fit kdisks (Note [fitted vocabulary], vocab_fit.cpp)
  // motion_vocab_per_type: each type's tokens, 0 for vocab (Note [tokens per type], smart_forward.cpp).
  std::array<int, kAgentTypes> type_vocab{};
  std::uint64_t seed = 0;
  nn::Precision precision = nn::Precision::fp32;  // of every layer; the loss and the graphs stay fp32
};

class SmartModel : public Model {
 public:
  SmartModel(const SmartConfig& config, int capacity);
  std::string family() const override { return "smart"; }
  std::string config_string() const override;
  nn::ParameterStore<float>& store() override { return store_; }
  double accumulate_gradients(const Batch& b, double normaliser) override;
  double loss_sum(const Batch& b) override;
  void prefetch(const Batch& next) override;
  // Micro-batches whose graph the loader thread built (Note [graph prefetch]).
  std::uint64_t prefetched_graphs() const { return graphs_.prefetched(); }
  void constrain_fields(std::vector<FieldSpec>& fields) const override;
  ExtraDatasets extra_datasets() const override;
  void load_extra_datasets(const std::string& weights_file) override;
  bool fitted_state_from(const std::string& weights_file) override;
  void fit_to_data(const Dataset& train) override;
  const SmartConfig& config() const { return config_; }
  const MotionVocab& vocab() const { return vocab_; }
  // Logits [agent nodes, vocab] of the last forward and the graph it ran on.
  const Tensor<float>& logits() const { return head2_->output(); }
  const SceneGraph& graph() const { return *graph_; }
  // Runs the forward on a batch (dropout as `training` says); returns the local loss sum.
  double forward(const Batch& b, bool training);

  // Note [incremental rollouts]: in a rollout, the nodes of a token step depend only on earlier
  // steps (temporal edges reach back, agent edges stay within a step). So the next forwards number
  // nodes time-major (node (a, t) = t A + a) and compute the rows of steps [from, to] alone: edges
  // are built into those steps only (their destinations numbered from the window's first row), and
  // every agent block attends over the keys and values that earlier forwards left in its cache
  // (Note [key/value cache], nn/layers/edge_attention.hpp); the map is encoded, and its keys and
  // values projected, by the first forward only (a rollout batch's map does not change). The scores
  // equal full forwards' to rounding. A rollout calls it with [0, k - 1] for its first token k and
  // [k - 1, k - 1] after (each window starts where the last ended); logits() then holds the window's
  // rows, from node logits_first_node(); end_rollout() returns to full, agent-major forwards.
  // copies > 1: the batch's rows are groups of that many rollouts of one scene, whose first row
  // alone carries the map (Note [rollout graphs], scene_graph.cpp); the same for the whole rollout.
  void rollout_window(int from, int to, int copies = 1);
  void end_rollout() { rollout_from_ = -1, rollout_next_ = 0; }
  std::int64_t logits_first_node() const { return window_row0_; }

  // Label-smoothed cross-entropy per agent node: loss(i) and, when dlogits is given, its gradient
  // times weight(i) * scale. Public only because nvcc allows no device lambda in a private member.
  void token_loss(const Tensor<float>& dlogits, double scale);

 private:
  void upload(const Batch& b);
  SceneRows rows_of_batch(const Batch& b, bool staged);
  // What blocks of edge kind `kind` (0 map-map, 1 temporal, 2 map-agent, 3 agent-agent) take as r:
  // the shared xhat, or the embedding (Note [shared edge normalisation]).
  const Tensor<float>& edge_input(int kind) const;
  const Tensor<float>& encode_map();  // the map blocks' output (or the map's input projection)
  void embed_edges();                 // the agent edges' relative embeddings (and their shared norms)
  void forward_window();              // Note [incremental rollouts]
  void backward();
  SmartConfig config_;
  MotionVocab vocab_;
  GraphPrefetcher graphs_;  // the token graphs, the next one built on the loader thread
  const SceneGraph* graph_ = nullptr;
  nn::ParameterStore<float> store_;
  nn::Workspace<float> ws_;
  nn::RelScratch<float> rel_scratch_;  // every block's (Note [folded relative projections])
  // Note [shared edge normalisation]: per edge kind (map-map, temporal, map-agent, agent-agent) the
  // normalised embedding and its rows' 1 / std, when the blocks share it.
  bool shared_norm_ = false;
  std::array<Tensor<float>*, 4> xhat_{}, rstd_{};
  std::unique_ptr<nn::Linear<float>> map_in1_, map_in2_;
  std::unique_ptr<nn::FourierEmbedding<float>> r_mm_;
  std::vector<std::unique_ptr<SmartBlock>> map_blocks_;
  std::unique_ptr<nn::Embedding<float>> embed_;
  std::unique_ptr<nn::FourierEmbedding<float>> r_t_, r_ma_, r_aa_;
  std::vector<std::unique_ptr<SmartBlock>> agent_blocks_;  // per layer: temporal, map -> agent, agent <-> agent
  std::unique_ptr<nn::Linear<float>> head1_, head2_;
  // The batch's graph on the device.
  View1<float> token_in_, target_, weight_, node_loss_;
  View1<std::uint64_t> agent_key_, map_key_;
  View2<float> map_feat_, rel_mm_, rel_t_, rel_ma_, rel_aa_;
  HostView1<float> host_loss_;
  Tensor<float>*dlogits_, *dh1_, *da_, *db_, *dm_, *dm2_, *dr_mm_, *dr_t_, *dr_ma_, *dr_aa_;
  std::uint64_t epoch_ = 0;
  // Note [incremental rollouts]: the window, the row its destinations are numbered from, and per
  // agent block the keys and values of every node so far ([agent or map nodes, H] each).
  int rollout_from_ = -1, rollout_to_ = -1, rollout_next_ = 0;  // -1: full forwards
  int rollout_copies_ = 1;
  std::int64_t window_row0_ = 0;
  std::vector<View2<float>> keys_, values_;
  std::array<std::vector<int>, 3> window_dst_;  // per agent edge kind: destinations within the window
  // Host staging of the batch's fields (device builds; host builds read them in place).
  HostView1<float> h_state_, h_poly_;
  HostView1<std::int64_t> h_type_, h_map_type_;
  HostView1<std::int32_t> h_valid_;
  HostView1<std::uint64_t> h_agent_off_, h_map_off_, h_ids_;
};

ModelFamily smart_family();

// A [rows, cols] view as a tensor over the same memory.
inline Tensor<float> rows_of(const View2<float>& v) { return Tensor<float>(v); }

}  // namespace hpct::smart
