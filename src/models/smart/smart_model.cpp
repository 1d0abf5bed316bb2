// `model smart`: construction, the forward over a batch's token graph, the backward, the loss
// (see smart_model.hpp).
#include "models/smart/smart_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "models/smart/edge_norm.hpp"
#include "nn/elementwise.hpp"

namespace hpct::smart {

namespace {

// A host pointer to `count` elements of device memory: the memory itself on host builds, else a
// copy into `staging` (sized for the largest batch in the constructor).
template <class T>
const T* on_host(const T* device, std::size_t count, const HostView1<T>& staging) {
  if (kHostBackend || count == 0) return device;
  if (count > staging.extent(0)) throw Error("internal: smart: a batch field exceeds its staging buffer");
  Kokkos::deep_copy(Kokkos::subview(staging, Kokkos::make_pair(std::size_t(0), count)),
                    Kokkos::View<const T*, MemSpace, Kokkos::MemoryUnmanaged>(device, count));
  return staging.data();
}

// Host vector prefix -> device view prefix.
template <class T, class V>
void upload_prefix(const std::vector<T>& host, std::size_t count, const V& device) {
  if (count == 0) return;
  Kokkos::deep_copy(Kokkos::subview(Kokkos::View<T*, MemSpace, Kokkos::MemoryUnmanaged>(device.data(),
                                                                                        device.span()),
                                    Kokkos::make_pair(std::size_t(0), count)),
                    Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(host.data(), count));
}

// A real that reads back exactly (%.17g).
std::string real_string(double v) {
  char b[40];
  std::snprintf(b, sizeof(b), "%.17g", v);
  return b;
}

// Note [incremental rollouts]: rows of `out` whose token step (node / per_step, time-major) lies in
// [from, to] go into the cache; the cache is then the next layer's input.
void keep_rows(const Tensor<float>& out, const View2<float>& cache, int nodes, int per_step, int from, int to) {
  const auto o = out.matrix();
  const int H = static_cast<int>(cache.extent(1));
  Kokkos::parallel_for(
      "smart_rollout_cache", range(0, nodes), KOKKOS_LAMBDA(const int i) {
        const int t = i / per_step;
        if (t < from || t > to) return;
        for (int h = 0; h < H; ++h) cache(i, h) = o(i, h);
      });
}

Tensor<float> rows_of(const View2<float>& v) {
  return Tensor<float>(v.data(),
                       Shape{static_cast<std::int64_t>(v.extent(0)), static_cast<std::int64_t>(v.extent(1))});
}

}  // namespace

SmartModel::SmartModel(const SmartConfig& c, int capacity)
    : config_(c),
      vocab_(c.vocab),
      graphs_(
          [&] {
            GraphLimits l = c.limits;
            l.scenes = capacity;
            return l;
          }(),
          vocab_) {
  if (c.heads <= 0 || c.hidden % c.heads != 0)
    throw Error("smart: smart_hidden (" + std::to_string(c.hidden) + ") must be a multiple of smart_heads (" +
                    std::to_string(c.heads) + ")",
                ExitCode::bad_input);
  const int H = c.hidden, V = c.vocab;
  const std::int64_t NA = graphs_.builder().agent_nodes_capacity(), NM = graphs_.builder().map_nodes_capacity();
  const std::int64_t Emm = graphs_.builder().map_map_capacity(), Et = graphs_.builder().temporal_capacity(),
                     Ema = graphs_.builder().map_agent_capacity(), Eaa = graphs_.builder().agent_agent_capacity();
  auto block = [&](const std::string& name, bool bipartite, std::int64_t edges, std::int64_t src, std::int64_t dst,
                   std::uint64_t salt) {
    SmartBlock::Config bc;
    bc.hidden = H, bc.heads = c.heads, bc.bipartite = bipartite, bc.dropout = c.dropout;
    bc.seed = rng::hash(c.seed, 0x736d617274ull, salt);  // every block its own dropout stream
    bc.max_edges = edges, bc.max_src = src, bc.max_dst = dst, bc.precision = c.precision;
    bc.rel_scratch = &rel_scratch_;
    const nn::Workspace<float>::ScratchScope unit(ws_, name);  // Note [scratch units]
    return std::make_unique<SmartBlock>(store_, ws_, name, bc);
  };
  // Note [scratch units]: each relative embedding is a unit; with the shared norm its output lives
  // only until normalize_edges has read it, which forward() calls right after the embedding.
  auto embedding = [&](const std::string& name, int inputs, std::int64_t edges) {
    const nn::Workspace<float>::ScratchScope unit(ws_, name);
    auto r = std::make_unique<nn::FourierEmbedding<float>>(store_, ws_, name, inputs, H, c.freqs,
                                                           static_cast<int>(edges), c.precision);
    if (shared_norm_) ws_.to_scratch(r->output());
    return r;
  };
  {  // One scratch for every block's folded relative projections (Note [folded relative projections]).
    nn::EdgeAttention<float>::Config ac;
    ac.has_r = true, ac.precision = c.precision;
    shared_norm_ = nn::EdgeAttention<float>::folds(ac);
    if (shared_norm_) {
      rel_scratch_ = nn::RelScratch<float>::request(ws_, "smart/rel", std::max(NA, NM),
                                                    static_cast<std::int64_t>(c.heads) * H);
      const std::int64_t caps[4] = {Emm, Et, Ema, Eaa};
      for (int k = 0; k < 4; ++k) {  // Note [shared edge normalisation]
        xhat_[static_cast<std::size_t>(k)] = &ws_.request("smart/xhat" + std::to_string(k), caps[k], H);
        rstd_[static_cast<std::size_t>(k)] = &ws_.request("smart/rstd" + std::to_string(k), caps[k], 1);
      }
    }
  }
  // Registration in forward order, the map first (Note [registration order], nn/parameters.hpp).
  {
    const nn::Workspace<float>::ScratchScope unit(ws_, "map_in");
    map_in1_ = std::make_unique<nn::Linear<float>>(store_, ws_, "map_in.0", kMapFeatures, H, static_cast<int>(NM),
                                                   nn::Activation::relu, c.precision);
    map_in2_ = std::make_unique<nn::Linear<float>>(store_, ws_, "map_in.2", H, H, static_cast<int>(NM),
                                                   nn::Activation::identity, c.precision);
  }
  r_mm_ = embedding("r_pl2pl", 3, Emm);
  for (int l = 0; l < c.map_layers; ++l)
    map_blocks_.push_back(block("map." + std::to_string(l), false, Emm, NM, NM, static_cast<std::uint64_t>(l)));
  embed_ = std::make_unique<nn::Embedding<float>>(store_, ws_, "agent_token_emb", kAgentTypes * V, H, Shape{NA},
                                                  c.precision);
  r_t_ = embedding("r_t", 4, Et);
  r_ma_ = embedding("r_pl2a", 3, Ema);
  r_aa_ = embedding("r_a2a", 3, Eaa);
  for (int l = 0; l < c.agent_layers; ++l) {
    const std::string p = "agent." + std::to_string(l);
    const auto salt = static_cast<std::uint64_t>(100 + 3 * l);
    agent_blocks_.push_back(block(p + ".t", false, Et, NA, NA, salt));
    agent_blocks_.push_back(block(p + ".pl2a", true, Ema, NM, NA, salt + 1));
    agent_blocks_.push_back(block(p + ".a2a", false, Eaa, NA, NA, salt + 2));
  }
  {  // A unit from the loss's gradient to the head's backward (Note [scratch units]).
    const nn::Workspace<float>::ScratchScope unit(ws_, "head");
    head1_ = std::make_unique<nn::Linear<float>>(store_, ws_, "head.0", H, H, static_cast<int>(NA),
                                                 nn::Activation::relu, c.precision);
    head2_ = std::make_unique<nn::Linear<float>>(store_, ws_, "head.2", H, V, static_cast<int>(NA),
                                                 nn::Activation::identity, c.precision);
    dlogits_ = &ws_.request_scratch("smart/dlogits", NA, V);
    dh1_ = &ws_.request_scratch("smart/dh1", NA, H);
  }
  da_ = &ws_.request("smart/da", NA, H);
  db_ = &ws_.request("smart/db", NA, H);
  dm_ = &ws_.request("smart/dm", NM, H);
  dm2_ = &ws_.request("smart/dm2", NM, H);
  dr_mm_ = &ws_.request("smart/dr_mm", Emm, H);
  dr_t_ = &ws_.request("smart/dr_t", Et, H);
  dr_ma_ = &ws_.request("smart/dr_ma", Ema, H);
  dr_aa_ = &ws_.request("smart/dr_aa", Eaa, H);
  store_.allocate();
  ws_.allocate();
  map_in1_->bind(store_), map_in2_->bind(store_), r_mm_->bind(store_), embed_->bind(store_);
  r_t_->bind(store_), r_ma_->bind(store_), r_aa_->bind(store_), head1_->bind(store_), head2_->bind(store_);
  for (auto& b : map_blocks_) b->bind(store_);
  for (auto& b : agent_blocks_) b->bind(store_);
  const auto na = static_cast<std::size_t>(NA), nm = static_cast<std::size_t>(NM);
  token_in_ = View1<float>("smart_token_in", na), target_ = View1<float>("smart_target", na);
  weight_ = View1<float>("smart_weight", na), node_loss_ = View1<float>("smart_node_loss", na);
  host_loss_ = HostView1<float>("smart_host_loss", na);
  agent_key_ = View1<std::uint64_t>("smart_agent_key", na), map_key_ = View1<std::uint64_t>("smart_map_key", nm);
  map_feat_ = View2<float>("smart_map_feat", nm, kMapFeatures);
  rel_mm_ = View2<float>("smart_rel_mm", static_cast<std::size_t>(Emm), 3);
  rel_t_ = View2<float>("smart_rel_t", static_cast<std::size_t>(Et), 4);
  rel_ma_ = View2<float>("smart_rel_ma", static_cast<std::size_t>(Ema), 3);
  rel_aa_ = View2<float>("smart_rel_aa", static_cast<std::size_t>(Eaa), 3);
  if (!kHostBackend) {
    const auto scenes = static_cast<std::size_t>(capacity);
    const auto agents = scenes * static_cast<std::size_t>(c.limits.max_agents);
    const auto segs = scenes * static_cast<std::size_t>(c.limits.max_segments);
    h_state_ = HostView1<float>("smart_h_state", agents * static_cast<std::size_t>(c.limits.grid.steps()) * 5);
    h_valid_ = HostView1<std::int32_t>("smart_h_valid", agents * static_cast<std::size_t>(c.limits.grid.steps()));
    h_poly_ = HostView1<float>("smart_h_poly", segs * kSegmentPoints * 2);
    h_type_ = HostView1<std::int64_t>("smart_h_type", agents);
    h_map_type_ = HostView1<std::int64_t>("smart_h_map_type", segs);
    h_agent_off_ = HostView1<std::uint64_t>("smart_h_aoff", scenes + 1);
    h_map_off_ = HostView1<std::uint64_t>("smart_h_moff", scenes + 1);
    h_ids_ = HostView1<std::uint64_t>("smart_h_ids", scenes);
  }
}

std::string SmartModel::config_string() const {
  const SmartConfig& c = config_;
  const GraphLimits& l = c.limits;
  // Note [stored configuration] in models/registry.hpp.
  return "smart_hidden=" + std::to_string(c.hidden) + " smart_heads=" + std::to_string(c.heads) +
         " smart_map_layers=" + std::to_string(c.map_layers) +
         " smart_agent_layers=" + std::to_string(c.agent_layers) + " motion_vocab=" + std::to_string(c.vocab) +
         " smart_freqs=" + std::to_string(c.freqs) + " smart_dropout=" + std::to_string(c.dropout) +
         " smart_label_smoothing=" + std::to_string(c.label_smoothing) +
         " smart_time_span=" + std::to_string(l.time_span) +
         " smart_map_neighbours=" + std::to_string(l.map_neighbours) +
         " smart_agent_neighbours=" + std::to_string(l.agent_neighbours) +
         " smart_max_agents=" + std::to_string(l.max_agents) +
         " smart_max_segments=" + std::to_string(l.max_segments) + " smart_step=" + real_string(c.step) +
         " smart_history=" + real_string(c.history) + " smart_future=" + real_string(c.future);
}

void SmartModel::constrain_fields(std::vector<FieldSpec>& fields) const {
  for (FieldSpec& f : fields)
    if (f.name == "agent_type" || f.name == "map_type") f.min_value = 0, f.max_value = kAgentTypes - 1;
    else if (f.name == "agent_valid") f.min_value = 0, f.max_value = 1;
}

ExtraDatasets SmartModel::extra_datasets() const { return {{"smart/motion_vocab", vocab_.table()}}; }

// The rows of a batch as the graph builder reads them, pointers on the host (rows.steps: 0 when
// agent_state is not [agents, steps, 5]).
SceneRows SmartModel::rows_of_batch(const Batch& b, bool staged) {
  const int n = b.n;
  const Batch::Field& st = b.field("agent_state");
  const Batch::Field& mp = b.field("map_polyline");
  const Tensor<std::int64_t> type = b.get_as<std::int64_t>("agent_type"),
                             map_type = b.get_as<std::int64_t>("map_type");
  SceneRows rows;
  rows.n = n, rows.epoch = b.epoch;
  rows.steps = st.shape.rank == 3 && st.shape.dim[2] == 5 ? static_cast<int>(st.shape.dim[1]) : 0;
  const auto agents = static_cast<std::size_t>(type.shape().size()),
             segs = static_cast<std::size_t>(map_type.shape().size());
  if (!staged) {  // host builds: the batch where it lies
    rows.state = static_cast<const float*>(st.data), rows.agent_offsets = st.offsets, rows.type = type.data();
    rows.poly = static_cast<const float*>(mp.data), rows.map_offsets = mp.offsets, rows.map_type = map_type.data();
    rows.ids = b.ids.data();
    if (b.has("agent_valid")) rows.valid = b.get_as<std::int32_t>("agent_valid").data();
    return rows;
  }
  // A file with more steps than the grid needs: the staging grows once (device builds only).
  if (static_cast<std::size_t>(st.shape.size()) > h_state_.extent(0))
    h_state_ = HostView1<float>("smart_h_state", static_cast<std::size_t>(st.shape.size()));
  if (static_cast<std::size_t>(st.shape.size()) / 5 > h_valid_.extent(0))
    h_valid_ = HostView1<std::int32_t>("smart_h_valid", static_cast<std::size_t>(st.shape.size()) / 5);
  rows.agent_offsets = on_host(st.offsets, static_cast<std::size_t>(n) + 1, h_agent_off_);
  rows.map_offsets = on_host(mp.offsets, static_cast<std::size_t>(n) + 1, h_map_off_);
  rows.state = on_host(static_cast<const float*>(st.data), static_cast<std::size_t>(st.shape.size()), h_state_);
  rows.poly = on_host(static_cast<const float*>(mp.data), static_cast<std::size_t>(mp.shape.size()), h_poly_);
  rows.type = on_host<std::int64_t>(type.data(), agents, h_type_);
  rows.map_type = on_host<std::int64_t>(map_type.data(), segs, h_map_type_);
  rows.ids = on_host<std::uint64_t>(b.ids.data(), static_cast<std::size_t>(n), h_ids_);
  if (b.has("agent_valid")) {
    const Tensor<std::int32_t> v = b.get_as<std::int32_t>("agent_valid");
    rows.valid = on_host<std::int32_t>(v.data(), static_cast<std::size_t>(v.shape().size()), h_valid_);
  }
  return rows;
}

void SmartModel::upload(const Batch& b) {
  const Batch::Field& st = b.field("agent_state");
  if (st.shape.rank != 3 || st.shape.dim[2] != 5 || st.shape.dim[1] < config_.limits.grid.steps())
    throw Error("smart: agent_state must be ragged [agents, steps >= " +
                    std::to_string(config_.limits.grid.steps()) + ", 5] (the model's grid); the batch has " +
                    st.shape.to_string(),
                ExitCode::bad_input);
  if (b.has("agent_valid")) {
    const Batch::Field& v = b.field("agent_valid");
    if (v.shape.rank != 2 || v.shape.dim[0] != st.shape.dim[0] || v.shape.dim[1] != st.shape.dim[1])
      throw Error("smart: agent_valid must be ragged [agents, steps] like agent_state " + st.shape.to_string() +
                      "; the batch has " + v.shape.to_string(),
                  ExitCode::bad_input);
  }
  SceneRows rows = rows_of_batch(b, !kHostBackend);
  if (rollout_from_ >= 0) {  // Note [incremental rollouts]
    rows.edges_from = rollout_from_, rows.edges_to = rollout_to_;
    rows.map_edges = rollout_from_ == 0, rows.time_major = true;
  }
  graph_ = &graphs_.take(rows);
  const SceneGraph& g = *graph_;
  const auto na = static_cast<std::size_t>(g.agents), nm = static_cast<std::size_t>(g.maps);
  upload_prefix(g.token_in, na, token_in_), upload_prefix(g.target, na, target_),
      upload_prefix(g.weight, na, weight_);
  upload_prefix(g.agent_key, na, agent_key_), upload_prefix(g.map_key, nm, map_key_);
  upload_prefix(g.map_feat, nm * kMapFeatures, map_feat_);
  upload_prefix(g.map_map.rel, static_cast<std::size_t>(g.map_map.count) * 3, rel_mm_);
  upload_prefix(g.temporal.rel, static_cast<std::size_t>(g.temporal.count) * 4, rel_t_);
  upload_prefix(g.map_agent.rel, static_cast<std::size_t>(g.map_agent.count) * 3, rel_ma_);
  upload_prefix(g.agent_agent.rel, static_cast<std::size_t>(g.agent_agent.count) * 3, rel_aa_);
  for (auto& blk : map_blocks_)
    blk->set_edges(g.map_map.src.data(), g.map_map.dst.data(), g.map_map.count, g.maps, g.maps);
  for (std::size_t k = 0; k < agent_blocks_.size(); ++k) {
    const EdgeList& e = k % 3 == 0 ? g.temporal : k % 3 == 1 ? g.map_agent : g.agent_agent;
    agent_blocks_[k]->set_edges(e.src.data(), e.dst.data(), e.count, k % 3 == 1 ? g.maps : g.agents, g.agents);
  }
}

const Tensor<float>& SmartModel::edge_input(int kind) const {
  if (shared_norm_) return *xhat_[static_cast<std::size_t>(kind)];
  const nn::FourierEmbedding<float>* r[4] = {r_mm_.get(), r_t_.get(), r_ma_.get(), r_aa_.get()};
  return r[kind]->output();
}

void SmartModel::prefetch(const Batch& b) {
  // Host builds read the batch where it lies; device builds stage each batch through the one set of
  // host buffers in upload(), so their graphs are still built in the step.
  if (!kHostBackend || b.n == 0) return;
  if (b.field("agent_type").dtype != DType::i64 || b.field("map_type").dtype != DType::i64) return;
  if (b.has("agent_valid") && b.field("agent_valid").dtype != DType::i32) return;
  const SceneRows rows = rows_of_batch(b, false);
  if (rows.steps < config_.limits.grid.steps()) return;  // upload() reports it
  graphs_.prefetch(rows);
}

double SmartModel::forward(const Batch& b, bool training) {
  upload(b);
  epoch_ = b.epoch;
  const SceneGraph& g = *graph_;
  const int na = static_cast<int>(g.agents), nm = static_cast<int>(g.maps);
  for (auto& blk : map_blocks_) blk->set_batch(epoch_, map_key_, training);
  for (auto& blk : agent_blocks_) blk->set_batch(epoch_, agent_key_, training);
  const Tensor<float>* xm = nullptr;
  Tensor<float> map_cached;
  if (rollout_from_ > 0) {  // Note [incremental rollouts]: the map's encoding is the first step's
    map_cached = rows_of(map_cache_);
    xm = &map_cached;
  } else {
    map_in1_->forward(rows_of(map_feat_), nm);
    map_in2_->forward(map_in1_->output(), nm);
    r_mm_->forward(rows_of(rel_mm_), static_cast<int>(g.map_map.count));
    xm = &map_in2_->output();
    if (shared_norm_ && !map_blocks_.empty())
      normalize_edges(r_mm_->output(), *xhat_[0], *rstd_[0], static_cast<int>(g.map_map.count));
    for (auto& blk : map_blocks_) {
      blk->forward(*xm, *xm, edge_input(0));
      xm = &blk->output();
    }
    if (rollout_from_ == 0) {
      keep_rows(*xm, map_cache_, nm, std::max(nm, 1), 0, 0);
      map_cached = rows_of(map_cache_);
      xm = &map_cached;
    }
  }
  embed_->forward(Tensor<float>(token_in_.data(), Shape{static_cast<std::int64_t>(token_in_.extent(0))}), na);
  // Each embedding normalised right after it: its output is scratch (Note [scratch units]).
  const bool norm = shared_norm_ && !agent_blocks_.empty();
  r_t_->forward(rows_of(rel_t_), static_cast<int>(g.temporal.count));
  if (norm) normalize_edges(r_t_->output(), *xhat_[1], *rstd_[1], static_cast<int>(g.temporal.count));
  r_ma_->forward(rows_of(rel_ma_), static_cast<int>(g.map_agent.count));
  if (norm) normalize_edges(r_ma_->output(), *xhat_[2], *rstd_[2], static_cast<int>(g.map_agent.count));
  r_aa_->forward(rows_of(rel_aa_), static_cast<int>(g.agent_agent.count));
  if (norm) normalize_edges(r_aa_->output(), *xhat_[3], *rstd_[3], static_cast<int>(g.agent_agent.count));
  const Tensor<float>* xa = &embed_->output();
  std::vector<Tensor<float>> cached;  // Note [incremental rollouts]
  for (std::size_t k = 0; k < agent_blocks_.size(); ++k) {
    SmartBlock& blk = *agent_blocks_[k];
    if (k % 3 == 1) blk.forward(*xm, *xa, edge_input(2));
    else blk.forward(*xa, *xa, edge_input(k % 3 == 0 ? 1 : 3));
    xa = &blk.output();
    if (rollout_from_ >= 0) {
      keep_rows(*xa, layer_cache_[k], na, static_cast<int>(g.time_major_agents), rollout_from_, rollout_to_);
      cached.push_back(rows_of(layer_cache_[k]));
      xa = &cached.back();
    }
  }
  head1_->forward(*xa, na);
  head2_->forward(head1_->output(), na);
  return 0.0;
}

void SmartModel::rollout_window(int from, int to) {
  if (layer_cache_.empty())
    for (std::size_t k = 0; k < agent_blocks_.size(); ++k)
      layer_cache_.emplace_back("smart_rollout_cache", token_in_.extent(0),
                                static_cast<std::size_t>(config_.hidden));
  if (map_cache_.extent(0) == 0)
    map_cache_ = View2<float>("smart_rollout_map_cache", map_feat_.extent(0),
                              static_cast<std::size_t>(config_.hidden));
  rollout_from_ = from, rollout_to_ = to;
}

void SmartModel::token_loss(const Tensor<float>& dlogits, double scale) {
  const int na = static_cast<int>(graph_->agents), V = config_.vocab;
  const auto z = head2_->output().matrix(), d = dlogits.matrix();
  const bool grad = !dlogits.empty();
  const auto target = target_, weight = weight_, loss = node_loss_;
  const double eps = config_.label_smoothing;
  Kokkos::parallel_for(
      "smart_loss", range(0, na), KOKKOS_LAMBDA(const int i) {
        double m = z(i, 0), mean = 0;
        for (int k = 0; k < V; ++k) m = z(i, k) > m ? z(i, k) : m, mean += z(i, k);
        double s = 0;
        for (int k = 0; k < V; ++k) s += kmath::exp(z(i, k) - m);
        const double lse = m + kmath::log(s);
        const int y = static_cast<int>(target(i));
        loss(i) = static_cast<float>(weight(i) * ((1 - eps) * (lse - z(i, y)) + eps * (lse - mean / V)));
        if (grad) {
          const double w = weight(i) * scale;
          for (int k = 0; k < V; ++k) {
            const double q = (k == y ? 1 - eps : 0.0) + eps / V;
            d(i, k) = static_cast<float>(w * (kmath::exp(z(i, k) - lse) - q));
          }
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
