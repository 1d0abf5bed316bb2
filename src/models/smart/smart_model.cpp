// `model smart`: construction, configuration, and a batch's token graph built and uploaded (see
// smart_model.hpp; the forward, loss and backward in smart_forward.cpp, rollouts' windowed forwards
// in smart_window.cpp).
#include "models/smart/smart_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/real_text.hpp"
#include "io/hdf5.hpp"
#include "models/smart/edge_norm.hpp"
#include "models/smart/vocab_fit.hpp"
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

// Host vector elements [first, end) -> the same elements of a device view.
template <class T, class V>
void upload_rows(const std::vector<T>& host, std::size_t first, std::size_t end, const V& device) {
  if (end <= first) return;
  const auto r = Kokkos::make_pair(first, end);
  Kokkos::deep_copy(
      Kokkos::subview(Kokkos::View<T*, MemSpace, Kokkos::MemoryUnmanaged>(device.data(), device.span()), r),
      Kokkos::subview(Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(host.data(), host.size()), r));
}

}  // namespace

SmartModel::SmartModel(const SmartConfig& c, int capacity)
    : config_(c),
      vocab_(c.vocab, c.type_vocab),
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
  std::string per_type;  // `all` when every type has motion_vocab tokens
  for (int t = 0; t < kAgentTypes; ++t)
    if (vocab_.count(t) != c.vocab)
      per_type += (per_type.empty() ? "" : ",") + std::string(kAgentTypeNames[t]) + ":" +
                  std::to_string(vocab_.count(t));
  if (per_type.empty()) per_type = "all";
  // Note [stored configuration] in models/registry.hpp.
  return "smart_hidden=" + std::to_string(c.hidden) + " smart_heads=" + std::to_string(c.heads) +
         " smart_map_layers=" + std::to_string(c.map_layers) +
         " smart_agent_layers=" + std::to_string(c.agent_layers) + " motion_vocab=" + std::to_string(c.vocab) +
         " smart_freqs=" + std::to_string(c.freqs) + " smart_dropout=" + real_text(c.dropout) +
         " smart_label_smoothing=" + real_text(c.label_smoothing) +
         " smart_time_span=" + std::to_string(l.time_span) +
         " smart_map_neighbours=" + std::to_string(l.map_neighbours) +
         " smart_agent_neighbours=" + std::to_string(l.agent_neighbours) +
         " smart_max_agents=" + std::to_string(l.max_agents) +
         " smart_max_segments=" + std::to_string(l.max_segments) + " smart_step=" + real_text(c.step) +
         " smart_history=" + real_text(c.history) + " smart_future=" + real_text(c.future) +
         " motion_vocab_fit=" + (c.fit_vocab ? "kdisks" : "grid") + " motion_vocab_per_type=" + per_type;
}

void SmartModel::constrain_fields(std::vector<FieldSpec>& fields) const {
  for (FieldSpec& f : fields)
    if (f.name == "agent_type" || f.name == "map_type") f.min_value = 0, f.max_value = kAgentTypes - 1;
    else if (f.name == "agent_valid") f.min_value = 0, f.max_value = 1;
}

// The vocabulary's tokens [types, vocab, 3] and, when fitted, its (centres, radius) per type.
ExtraDatasets SmartModel::extra_datasets() const {
  ExtraDatasets d = {{"smart/motion_vocab", vocab_.table()}};
  if (config_.fit_vocab) d["smart/motion_vocab_fit"] = vocab_.fit_table();
  return d;
}

void SmartModel::load_extra_datasets(const std::string& weights_file) {
  if (!config_.fit_vocab) return;  // the grid follows from motion_vocab
  const h5::File f = h5::File::open_read(weights_file);
  for (const char* name : {"smart/motion_vocab", "smart/motion_vocab_fit"})
    if (!h5::exists(f, name))
      throw Error(weights_file + ": no dataset '" + name + "' for its motion_vocab_fit kdisks vocabulary",
                  ExitCode::bad_input);
  try {
    vocab_.set_fit_table(h5::read_all<double>(f, "smart/motion_vocab"),
                         h5::read_all<double>(f, "smart/motion_vocab_fit"));
  } catch (const Error& e) {
    throw Error(weights_file + ": " + e.what(), ExitCode::bad_input);
  }
}

// Note [fine-tuning keeps the tokens]: the head's logit k means the k-th motion of the vocabulary
// the weights were trained with; refitting k-disks to new data would give every id another motion.
// A run from init_weights with a fitted vocabulary therefore takes that file's (and says so); a file
// without one (a grid model) leaves the fit to this run's data.
bool SmartModel::fitted_state_from(const std::string& weights_file) {
  if (!config_.fit_vocab) return false;
  bool fitted = false;
  {
    const h5::File f = h5::File::open_read(weights_file);
    fitted = h5::exists(f, "smart/motion_vocab_fit");
  }
  if (!fitted) {
    Log::info("  motion_vocab_fit: " + weights_file + " holds no fitted vocabulary: fitting one to this data");
    return false;
  }
  load_extra_datasets(weights_file);
  Log::info("  motion_vocab_fit: the vocabulary of " + weights_file + " (init_weights), not refitted");
  return true;
}

void SmartModel::fit_to_data(const Dataset& train) {
  if (config_.fit_vocab) fit_vocab(vocab_, train, config_.limits.grid, config_.seed);
}

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
    rows.map_copies = rollout_copies_, rows.append = rollout_from_ > 0;  // Note [rollout graphs]
  }
  graph_ = &graphs_.take(rows);
  const SceneGraph& g = *graph_;
  // A window that continues a rollout uploads its own rows alone: the map is encoded already.
  const std::size_t first = rows.append ? static_cast<std::size_t>(rollout_from_ * g.time_major_agents) : 0;
  const auto na = static_cast<std::size_t>(g.agents), nm = rows.append ? 0 : static_cast<std::size_t>(g.maps);
  upload_rows(g.token_in, first, na, token_in_), upload_rows(g.target, first, na, target_),
      upload_rows(g.weight, first, na, weight_);
  upload_rows(g.agent_key, first, na, agent_key_), upload_rows(g.map_key, 0, nm, map_key_);
  upload_rows(g.map_feat, 0, nm * kMapFeatures, map_feat_);
  upload_rows(g.map_map.rel, 0, static_cast<std::size_t>(g.map_map.count) * 3, rel_mm_);
  upload_rows(g.temporal.rel, 0, static_cast<std::size_t>(g.temporal.count) * 4, rel_t_);
  upload_rows(g.map_agent.rel, 0, static_cast<std::size_t>(g.map_agent.count) * 3, rel_ma_);
  upload_rows(g.agent_agent.rel, 0, static_cast<std::size_t>(g.agent_agent.count) * 3, rel_aa_);
  for (auto& blk : map_blocks_)
    blk->set_edges(g.map_map.src.data(), g.map_map.dst.data(), g.map_map.count, g.maps, g.maps);
  // Note [incremental rollouts]: destinations numbered from the window's first row.
  window_row0_ = rollout_from_ > 0 ? static_cast<std::int64_t>(rollout_from_) * g.time_major_agents : 0;
  const EdgeList* kinds[3] = {&g.temporal, &g.map_agent, &g.agent_agent};
  const int* dst[3];
  for (std::size_t i = 0; i < 3; ++i) {
    dst[i] = kinds[i]->dst.data();
    if (window_row0_ == 0) continue;
    std::vector<int>& local = window_dst_[i];
    local.resize(static_cast<std::size_t>(kinds[i]->count));
    for (std::size_t e = 0; e < local.size(); ++e) local[e] = kinds[i]->dst[e] - static_cast<int>(window_row0_);
    dst[i] = local.data();
  }
  for (std::size_t k = 0; k < agent_blocks_.size(); ++k)
    agent_blocks_[k]->set_edges(kinds[k % 3]->src.data(), dst[k % 3], kinds[k % 3]->count,
                                k % 3 == 1 ? g.maps : g.agents, g.agents - window_row0_);
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


}  // namespace hpct::smart
