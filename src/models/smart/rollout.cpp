// Autoregressive rollouts of `model smart` and their minADE / minFDE / miss rate (see rollout.hpp).
#include "models/smart/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/rng.hpp"
#include "io/hdf5.hpp"

namespace hpct::smart {

namespace {

template <class T>
View1<T> device_view(const std::vector<T>& v, const char* label) {
  View1<T> d(std::string(label), std::max<std::size_t>(v.size(), 1));
  if (!v.empty())
    Kokkos::deep_copy(Kokkos::subview(d, Kokkos::make_pair(std::size_t(0), v.size())),
                      Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}

const char* const* kTypeNames = kAgentTypeNames;

// A scene file in memory (agent_valid absent: every step valid).
struct SceneData {
  std::vector<float> state, poly;
  std::vector<std::int32_t> valid;
  std::vector<long long> type, map_type, ao, mo;
  std::size_t steps = 0;
  bool ok(std::size_t agent, std::size_t step) const { return valid.empty() || valid[agent * steps + step] != 0; }
};

SceneData read_scenes(const std::string& path) {
  const h5::File f = h5::File::open_read(path);
  SceneData d;
  const h5::DatasetInfo si = h5::info(f, "agent_state");
  if (si.dims.size() != 3 || si.dims[2] != 5)
    throw Error(path + ": agent_state must be [agents, steps, 5]", ExitCode::bad_input);
  d.steps = static_cast<std::size_t>(si.dims[1]);
  d.state = h5::read_all<float>(f, "agent_state");
  d.type = h5::read_all<long long>(f, "agent_type");
  d.poly = h5::read_all<float>(f, "map_polyline");
  d.map_type = h5::read_all<long long>(f, "map_type");
  d.ao = h5::read_all<long long>(f, "agent_state_offsets");
  d.mo = h5::read_all<long long>(f, "map_polyline_offsets");
  if (h5::exists(f, "agent_valid")) {
    d.valid = h5::read_all<int>(f, "agent_valid");
    if (d.valid.size() != d.state.size() / 5)
      throw Error(path + ": agent_valid must be [agents, steps] like agent_state", ExitCode::bad_input);
  }
  if (d.ao.size() != d.mo.size() || d.ao.empty())
    throw Error(path + ": agent_state_offsets and map_polyline_offsets must count the same scenes",
                ExitCode::bad_input);
  return d;
}

// One batch: `scenes` (global indices) x R copies; futures are overwritten by the rollouts as they go.
struct RolloutBatch {
  std::vector<std::uint64_t> scenes;
  std::vector<float> st, pl;
  std::vector<std::int32_t> valid;
  std::vector<std::int64_t> ty, mt;
  std::vector<std::uint64_t> aoff{0}, moff{0}, ids;
  std::vector<std::size_t> first;  // [scenes x R]: the row's first agent in st
  std::vector<char> rolled;        // [agents of the batch]: rolled out
};

// shared_map: a scene's map in its first copy only (Note [rollout graphs] in scene_graph.cpp).
RolloutBatch gather(const SceneData& d, const std::vector<std::uint64_t>& scenes, int R, const TokenGrid& g,
                    bool shared_map) {
  RolloutBatch b;
  b.scenes = scenes;
  const std::size_t S = d.steps, now = static_cast<std::size_t>(g.history * g.shift);
  for (const std::uint64_t s : scenes) {
    const auto a0 = static_cast<std::size_t>(d.ao[s]), na = static_cast<std::size_t>(d.ao[s + 1] - d.ao[s]);
    const auto m0 = static_cast<std::size_t>(d.mo[s]);
    for (int r = 0; r < R; ++r) {
      const auto nm = r > 0 && shared_map ? 0 : static_cast<std::size_t>(d.mo[s + 1] - d.mo[s]);
      b.first.push_back(b.ty.size());
      b.st.insert(b.st.end(), d.state.begin() + static_cast<std::ptrdiff_t>(a0 * S * 5),
                  d.state.begin() + static_cast<std::ptrdiff_t>((a0 + na) * S * 5));
      b.pl.insert(b.pl.end(), d.poly.begin() + static_cast<std::ptrdiff_t>(m0 * 22),
                  d.poly.begin() + static_cast<std::ptrdiff_t>((m0 + nm) * 22));
      for (std::size_t a = 0; a < na; ++a) {
        b.ty.push_back(d.type[a0 + a]);
        // Note [masked evaluation]: seen over the last history token -> rolled out, future valid.
        bool seen = true;
        for (std::size_t i = now - static_cast<std::size_t>(g.shift); i <= now; ++i) seen = seen && d.ok(a0 + a, i);
        b.rolled.push_back(seen);
        for (std::size_t i = 0; i < S; ++i)
          b.valid.push_back(i <= now ? (d.ok(a0 + a, i) ? 1 : 0) : (seen ? 1 : 0));
      }
      for (std::size_t m = 0; m < nm; ++m) b.mt.push_back(d.map_type[m0 + m]);
      b.aoff.push_back(b.aoff.back() + na), b.moff.push_back(b.moff.back() + nm), b.ids.push_back(s * 1000 + r);
    }
  }
  return b;
}

// The token sampled among the top k of logits z (V of them) with uniform u in [0, 1): the k largest
// (ties: the lower id first) kept sorted in one pass over the logits.
int sample_top_k(const float* z, int V, int top_k, double u) {
  const int K = std::min({top_k, V, 16});
  int best[16] = {}, n = 0;  // zeroed: GCC cannot see that V >= K fills the first K
  for (int v = 0; v < V; ++v) {
    if (n == K && !(z[v] > z[best[K - 1]])) continue;  // a tie ranks below the earlier id
    int i = n < K ? n++ : K - 1;
    for (; i > 0 && z[v] > z[best[i - 1]]; --i) best[i] = best[i - 1];
    best[i] = v;
  }
  double w[16], sum = 0;
  for (int i = 0; i < K; ++i) w[i] = std::exp(double(z[best[i]] - z[best[0]])), sum += w[i];
  u *= sum;
  for (int i = 0; i < K; ++i) {
    if (u < w[i]) return best[i];
    u -= w[i];
  }
  return best[K - 1];
}

// Runs the rollouts of one batch in place (b.st's future time points).
void roll(SmartModel& model, RolloutBatch& b, std::size_t S, const RolloutOptions& o, std::vector<float>& logits) {
  const bool incremental = o.incremental;
  const TokenGrid& g = model.config().limits.grid;
  const MotionVocab& vocab = model.vocab();
  const int T = g.inputs(), V = vocab.size(), R = o.rollouts;
  const auto rows = static_cast<int>(b.ids.size());
  const auto d_pl = device_view(b.pl, "rollout_poly");
  const auto d_ty = device_view(b.ty, "rollout_type"), d_mt = device_view(b.mt, "rollout_map_type");
  const auto d_ao = device_view(b.aoff, "rollout_ao"), d_mo = device_view(b.moff, "rollout_mo");
  const auto d_ids = device_view(b.ids, "rollout_ids");
  const auto d_valid = device_view(b.valid, "rollout_valid");
  const auto A = static_cast<std::int64_t>(b.aoff.back()), M = static_cast<std::int64_t>(b.moff.back());
  const auto steps = static_cast<std::int64_t>(S);
  // Host builds read the states where the rollout writes them; device builds copy them per token.
  View1<float> d_st = kHostBackend ? View1<float>(b.st.data(), b.st.size())
                                   : View1<float>("rollout_state", std::max<std::size_t>(b.st.size(), 1));
  for (int k = g.history; k < g.tokens; ++k) {
    if (!kHostBackend)
      Kokkos::deep_copy(Kokkos::subview(d_st, Kokkos::make_pair(std::size_t(0), b.st.size())),
                        Kokkos::View<const float*, HostSpace, Kokkos::MemoryUnmanaged>(b.st.data(), b.st.size()));
    Batch batch;
    batch.n = rows, batch.ids = d_ids;
    batch.set<float>("agent_state", Tensor<float>(d_st.data(), Shape{A, steps, 5}), d_ao.data());
    batch.set<std::int32_t>("agent_valid", Tensor<std::int32_t>(d_valid.data(), Shape{A, steps}), d_ao.data());
    batch.set<std::int64_t>("agent_type", Tensor<std::int64_t>(d_ty.data(), Shape{A}), d_ao.data());
    batch.set<float>("map_polyline", Tensor<float>(d_pl.data(), Shape{M, 11, 2}), d_mo.data());
    batch.set<std::int64_t>("map_type", Tensor<std::int64_t>(d_mt.data(), Shape{M}), d_mo.data());
    if (incremental) model.rollout_window(k == g.history ? 0 : k - 1, k - 1, R);  // Note [incremental rollouts]
    model.forward(batch, false);
    // Rollouts number nodes time-major: node (a, t) = t A + a, and the logits hold the window's
    // nodes from `first_node` (Note [incremental rollouts]).
    const auto first_node = static_cast<std::size_t>(model.logits_first_node());
    const auto nodes = static_cast<std::size_t>(model.graph().agents) - first_node;
    logits.resize(nodes * static_cast<std::size_t>(V));
    Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryUnmanaged>(logits.data(), logits.size()),
                      Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(model.logits().data(),
                                                                                    logits.size()));
    // Node (a, k - 1) predicts token k: the motion from point k to point k + 1.
    for (int row = 0; row < rows; ++row) {
      const std::uint64_t s = b.scenes[static_cast<std::size_t>(row / R)];
      const std::size_t first = b.first[static_cast<std::size_t>(row - row % R)];  // the scene's first copy
      for (auto a = static_cast<std::size_t>(b.aoff[static_cast<std::size_t>(row)]);
           a < b.aoff[static_cast<std::size_t>(row) + 1]; ++a) {
        if (!b.rolled[a]) continue;
        const std::size_t node = incremental ? static_cast<std::size_t>(k - 1) * static_cast<std::size_t>(A) + a
                                             : a * static_cast<std::size_t>(T) + static_cast<std::size_t>(k - 1);
        // Keyed by the agent's place among the scene's R copies, as when a scene was a batch.
        const double u = rng::uniform(rng::hash(o.seed, s, a - first, static_cast<std::uint64_t>(k)));
        // Among the type's own tokens (Note [tokens per type] in smart_forward.cpp).
        const int type = static_cast<int>(std::clamp<std::int64_t>(b.ty[a], 0, kAgentTypes - 1));
        const int pick = sample_top_k(&logits[(node - first_node) * static_cast<std::size_t>(V)],
                                      vocab.tokens(type), o.top_k, u);
        // From the pose the tokens so far reconstruct (Note [drift-free tokens] in scene_graph.cpp).
        const double* p = &model.graph().agent_pose[node * 3];
        double x = p[0], y = p[1], h = p[2];
        vocab.apply(type, pick, x, y, h);
        float* q = &b.st[(a * S + static_cast<std::size_t>((k + 1) * g.shift)) * 5];
        q[0] = static_cast<float>(x), q[1] = static_cast<float>(y), q[2] = static_cast<float>(h);
      }
    }
  }
  model.end_rollout();
}

// Adds the scores of scene `s` (its copies in b from agent `first`) to the report.
void score(const SceneData& d, const RolloutBatch& b, std::uint64_t s, std::size_t first, const TokenGrid& g,
           double step, int R, RolloutReport& rep) {
  const auto a0 = static_cast<std::size_t>(d.ao[s]), na = static_cast<std::size_t>(d.ao[s + 1] - d.ao[s]);
  const std::size_t S = d.steps, now = static_cast<std::size_t>(g.history * g.shift);
  for (std::size_t a = 0; a < na; ++a) {
    if (!b.rolled[first + a]) continue;
    const float* truth = &d.state[(a0 + a) * S * 5];
    int seen = 0;
    std::size_t last = 0;
    for (int pt = g.history + 1; pt <= g.tokens; ++pt)
      if (d.ok(a0 + a, static_cast<std::size_t>(pt * g.shift)))
        ++seen, last = static_cast<std::size_t>(pt * g.shift);
    if (seen == 0) continue;  // Note [masked evaluation]
    auto errors = [&](auto&& position, double& ade, double& fde) {
      ade = 0, fde = 0;
      for (int pt = g.history + 1; pt <= g.tokens; ++pt) {
        const auto i = static_cast<std::size_t>(pt * g.shift);
        if (!d.ok(a0 + a, i)) continue;
        double x, y;
        position(i, x, y);
        const double e = std::hypot(x - truth[i * 5], y - truth[i * 5 + 1]);
        ade += e;
        if (i == last) fde = e;
      }
      ade /= seen;
    };
    double best_ade = std::numeric_limits<double>::max(), best_fde = best_ade;
    for (int r = 0; r < R; ++r) {
      const float* roll = &b.st[(first + static_cast<std::size_t>(r) * na + a) * S * 5];
      double ade, fde;
      errors([&](std::size_t i, double& x, double& y) { x = roll[i * 5], y = roll[i * 5 + 1]; }, ade, fde);
      best_ade = std::min(best_ade, ade), best_fde = std::min(best_fde, fde);
    }
    const float* h = truth + now * 5;
    double cv_ade, cv_fde;
    errors(
        [&](std::size_t i, double& x, double& y) {
          const double dt = static_cast<double>(i - now) * step;
          x = h[0] + h[3] * dt, y = h[1] + h[4] * dt;
        },
        cv_ade, cv_fde);
    const int tyi = static_cast<int>(std::clamp<long long>(d.type[a0 + a], 0, kAgentTypes - 1));
    TypeScores& ts = rep.types[static_cast<std::size_t>(tyi)];
    ts.agents += 1, ts.min_ade += best_ade, ts.min_fde += best_fde, ts.miss += best_fde > kMissDistance ? 1.0 : 0.0;
    ts.cv_ade += cv_ade, ts.cv_fde += cv_fde, ts.cv_miss += cv_fde > kMissDistance ? 1.0 : 0.0;
  }
}

// Copies scene s (its first copy in b from agent `first`) and its R rollouts into `out`.
void keep(SceneRollouts& out, const SceneData& d, const RolloutBatch& b, std::uint64_t s, std::size_t first,
          const TokenGrid& g, int R) {
  const auto a0 = static_cast<std::size_t>(d.ao[s]), na = static_cast<std::size_t>(d.ao[s + 1] - d.ao[s]);
  const auto m0 = static_cast<std::size_t>(d.mo[s]), nm = static_cast<std::size_t>(d.mo[s + 1] - d.mo[s]);
  out.scene = static_cast<long long>(s), out.agents = na, out.segments = nm, out.grid = g;
  out.map.assign(d.poly.begin() + static_cast<std::ptrdiff_t>(m0 * 22),
                 d.poly.begin() + static_cast<std::ptrdiff_t>((m0 + nm) * 22));
  out.map_type.assign(d.map_type.begin() + static_cast<std::ptrdiff_t>(m0),
                      d.map_type.begin() + static_cast<std::ptrdiff_t>(m0 + nm));
  out.agent_type.assign(d.type.begin() + static_cast<std::ptrdiff_t>(a0),
                        d.type.begin() + static_cast<std::ptrdiff_t>(a0 + na));
  out.truth.clear(), out.rollouts.clear();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t a = 0; a < na; ++a)
    for (std::size_t t = 0; t < d.steps; ++t)
      for (std::size_t c = 0; c < 2; ++c)
        out.truth.push_back(d.ok(a0 + a, t) ? d.state[((a0 + a) * d.steps + t) * 5 + c] : nan);
  for (int r = 0; r < R; ++r)
    for (std::size_t a = 0; a < na; ++a)
      for (int pt = 0; pt <= g.tokens; ++pt)
        for (std::size_t c = 0; c < 2; ++c)
          out.rollouts.push_back(b.rolled[first + a]
                                     ? b.st[((first + static_cast<std::size_t>(r) * na + a) * d.steps +
                                             static_cast<std::size_t>(pt * g.shift)) *
                                                5 +
                                            c]
                                     : nan);
}

}  // namespace

RolloutReport evaluate_rollouts(Model& any, const std::string& path, const RolloutOptions& o) {
  auto* smart = dynamic_cast<SmartModel*>(&any);
  if (!smart) throw Error("rollouts need a smart model, not " + any.family(), ExitCode::bad_input);
  SmartModel& model = *smart;
  if (o.rollouts < 1 || o.top_k < 1 || o.top_k > 16 || o.scenes_per_batch < 1)
    throw Error("smart rollouts: --rollouts and --batch must be >= 1 and --top-k in [1, 16]", ExitCode::bad_input);
  const SceneData d = read_scenes(path);
  const TokenGrid& g = model.config().limits.grid;
  if (d.steps < static_cast<std::size_t>(g.steps()))
    throw Error(path + ": agent_state holds " + std::to_string(d.steps) +
                    " steps per agent; the model's grid needs " + std::to_string(g.steps()),
                ExitCode::bad_input);
  RolloutReport rep;
  rep.rollouts = o.rollouts, rep.top_k = o.top_k;
  rep.horizon = static_cast<double>((g.tokens - g.history) * g.shift) * model.config().step;
  std::uint64_t scenes = d.ao.size() - 1;
  if (o.max_scenes > 0) scenes = std::min<std::uint64_t>(scenes, o.max_scenes);
  std::vector<std::uint64_t> mine;  // this rank's scenes with agents
  for (std::uint64_t s = static_cast<std::uint64_t>(o.rank); s < scenes; s += static_cast<std::uint64_t>(o.ranks))
    if (d.ao[s + 1] > d.ao[s]) mine.push_back(s);
  std::vector<float> logits;
  for (std::size_t c = 0; c < mine.size(); c += static_cast<std::size_t>(o.scenes_per_batch)) {
    const std::vector<std::uint64_t> chunk(
        mine.begin() + static_cast<std::ptrdiff_t>(c),
        mine.begin() +
            static_cast<std::ptrdiff_t>(std::min(mine.size(), c + static_cast<std::size_t>(o.scenes_per_batch))));
    Heartbeat::beat_current("rolling out a batch of scenes", path);  // Note [the tools' guard]
    RolloutBatch b = gather(d, chunk, o.rollouts, g, o.incremental);
    roll(model, b, d.steps, o, logits);
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      const std::size_t first = b.first[i * static_cast<std::size_t>(o.rollouts)];
      score(d, b, chunk[i], first, g, model.config().step, o.rollouts, rep);
      if (static_cast<long long>(chunk[i]) == o.keep_scene) keep(rep.scene, d, b, chunk[i], first, g, o.rollouts);
      rep.scenes += 1;
    }
  }
  return rep;
}

void RolloutReport::finish() {
  for (TypeScores& t : types)
    if (t.agents > 0) {
      const double n = t.agents;
      t.min_ade /= n, t.min_fde /= n, t.miss /= n, t.cv_ade /= n, t.cv_fde /= n, t.cv_miss /= n;
    }
}

void SceneRollouts::write(const std::string& path, int rollouts_count) const {
  if (scene < 0) throw Error("internal: no scene kept to write", ExitCode::failure);
  const h5::File f = h5::File::create(path);
  const std::uint64_t A = agents, M = segments, R = static_cast<std::uint64_t>(rollouts_count);
  h5::write(f, "map_polyline", {M, 11, 2}, map.data());
  h5::write(f, "map_type", {M}, map_type.data());
  h5::write(f, "agent_type", {A}, agent_type.data());
  h5::write(f, "truth", {A, static_cast<std::uint64_t>(A ? truth.size() / A / 2 : 0), 2}, truth.data());
  h5::write(f, "rollouts", {R, A, static_cast<std::uint64_t>(grid.tokens + 1), 2}, rollouts.data());
  h5::write_attr(f, "/", "scene", scene);
  h5::write_attr(f, "/", "history_steps", static_cast<long long>(grid.history * grid.shift + 1));
  h5::write_attr(f, "/", "rollout_start_point", static_cast<long long>(grid.history));
}

std::string RolloutReport::table() const {
  char head[300];
  std::snprintf(head, sizeof(head),
                "minADE / minFDE at %.1f s (m) and miss rate (minFDE > %.0f m) over %.0f scenes, %d rollouts per "
                "agent (top-%d sampling) vs the constant-velocity baseline:\n",
                horizon, kMissDistance, scenes, rollouts, top_k);
  std::string out = head;
  char line[200];
  std::snprintf(line, sizeof(line), "  %-11s %7s %9s %9s %6s %12s %12s %8s\n", "type", "agents", "minADE", "minFDE",
                "miss", "const-vel ADE", "const-vel FDE", "cv miss");
  out += line;
  for (int t = 0; t < kAgentTypes; ++t) {
    const TypeScores& s = types[static_cast<std::size_t>(t)];
    std::snprintf(line, sizeof(line), "  %-11s %7.0f %9.3f %9.3f %6.3f %12.3f %12.3f %8.3f\n", kTypeNames[t],
                  s.agents, s.min_ade, s.min_fde, s.miss, s.cv_ade, s.cv_fde, s.cv_miss);
    out += line;
  }
  return out;
}

std::string RolloutReport::csv() const {
  std::string out = "type,agents,min_ade,min_fde,miss_rate,const_vel_ade,const_vel_fde,const_vel_miss_rate\n";
  char line[200];
  for (int t = 0; t < kAgentTypes; ++t) {
    const TypeScores& s = types[static_cast<std::size_t>(t)];
    std::snprintf(line, sizeof(line), "%s,%.0f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", kTypeNames[t], s.agents, s.min_ade,
                  s.min_fde, s.miss, s.cv_ade, s.cv_fde, s.cv_miss);
    out += line;
  }
  return out;
}

}  // namespace hpct::smart
