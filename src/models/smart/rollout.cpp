// Autoregressive rollouts of `model smart` and their minADE / minFDE (see rollout.hpp).
#include "models/smart/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "io/hdf5.hpp"

namespace hpct::smart {

namespace {

constexpr int kSteps = kTokenSteps * kShift + 1;       // 91
constexpr int kFirstFuturePoint = kHistoryTokens + 1;  // time point 3 = step 15

template <class T>
View1<T> device_view(const std::vector<T>& v, const char* label) {
  View1<T> d(std::string(label), std::max<std::size_t>(v.size(), 1));
  if (!v.empty())
    Kokkos::deep_copy(Kokkos::subview(d, Kokkos::make_pair(std::size_t(0), v.size())),
                      Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(v.data(), v.size()));
  return d;
}

const char* kTypeNames[kAgentTypes] = {"vehicle", "pedestrian", "cyclist"};

// Copies scene s (agents a0.., segments m0..) and its R rollouts (the copies in `st`) into `out`.
void keep(SceneRollouts& out, std::uint64_t s, std::size_t na, std::size_t nm, const std::vector<float>& state,
          std::size_t a0, const std::vector<float>& poly, std::size_t m0, const std::vector<long long>& type,
          const std::vector<long long>& map_type, const std::vector<float>& st, int R) {
  out.scene = static_cast<long long>(s), out.agents = na, out.segments = nm;
  out.map.assign(poly.begin() + static_cast<std::ptrdiff_t>(m0 * 22),
                 poly.begin() + static_cast<std::ptrdiff_t>((m0 + nm) * 22));
  out.map_type.assign(map_type.begin() + static_cast<std::ptrdiff_t>(m0),
                      map_type.begin() + static_cast<std::ptrdiff_t>(m0 + nm));
  out.agent_type.assign(type.begin() + static_cast<std::ptrdiff_t>(a0),
                        type.begin() + static_cast<std::ptrdiff_t>(a0 + na));
  out.truth.clear(), out.rollouts.clear();
  for (std::size_t a = 0; a < na; ++a)
    for (int t = 0; t < kSteps; ++t)
      for (int c = 0; c < 2; ++c)
        out.truth.push_back(state[((a0 + a) * kSteps + static_cast<std::size_t>(t)) * 5 + c]);
  for (int r = 0; r < R; ++r)
    for (std::size_t a = 0; a < na; ++a)
      for (int pt = 0; pt <= kTokenSteps; ++pt)
        for (int c = 0; c < 2; ++c)
          out.rollouts.push_back(
              st[((static_cast<std::size_t>(r) * na + a) * kSteps + static_cast<std::size_t>(pt * kShift)) * 5 +
                 c]);
}

}  // namespace

RolloutReport evaluate_rollouts(Model& any, const std::string& path, const RolloutOptions& o) {
  auto* smart = dynamic_cast<SmartModel*>(&any);
  if (!smart) throw Error("rollouts need a smart model, not " + any.family(), ExitCode::bad_input);
  SmartModel& model = *smart;
  const h5::File f = h5::File::open_read(path);
  const auto state = h5::read_all<float>(f, "agent_state");
  const auto type = h5::read_all<long long>(f, "agent_type");
  const auto poly = h5::read_all<float>(f, "map_polyline");
  const auto map_type = h5::read_all<long long>(f, "map_type");
  const auto ao = h5::read_all<long long>(f, "agent_state_offsets");
  const auto mo = h5::read_all<long long>(f, "map_polyline_offsets");
  const MotionVocab& vocab = model.vocab();
  const int R = o.rollouts, T = kInputTokens, V = vocab.size();
  RolloutReport rep;
  rep.rollouts = o.rollouts, rep.top_k = o.top_k;
  if (o.rollouts < 1 || o.top_k < 1 || o.top_k > 16)
    throw Error("smart rollouts: --rollouts must be >= 1 and --top-k in [1, 16]", ExitCode::bad_input);
  std::uint64_t scenes = ao.size() - 1;
  if (o.max_scenes > 0) scenes = std::min<std::uint64_t>(scenes, o.max_scenes);
  std::vector<float> logits;
  for (std::uint64_t s = 0; s < scenes; ++s) {
    const auto a0 = static_cast<std::size_t>(ao[s]), na = static_cast<std::size_t>(ao[s + 1] - ao[s]);
    const auto m0 = static_cast<std::size_t>(mo[s]), nm = static_cast<std::size_t>(mo[s + 1] - mo[s]);
    if (na == 0) continue;
    // R copies of the scene; futures are overwritten by the rollouts as they go.
    std::vector<float> st, pl;
    std::vector<std::int64_t> ty, mt;
    std::vector<std::uint64_t> aoff{0}, moff{0}, ids;
    for (int r = 0; r < R; ++r) {
      st.insert(st.end(), state.begin() + static_cast<std::ptrdiff_t>(a0 * kSteps * 5),
                state.begin() + static_cast<std::ptrdiff_t>((a0 + na) * kSteps * 5));
      pl.insert(pl.end(), poly.begin() + static_cast<std::ptrdiff_t>(m0 * 22),
                poly.begin() + static_cast<std::ptrdiff_t>((m0 + nm) * 22));
      for (std::size_t a = 0; a < na; ++a) ty.push_back(type[a0 + a]);
      for (std::size_t m = 0; m < nm; ++m) mt.push_back(map_type[m0 + m]);
      aoff.push_back(aoff.back() + na), moff.push_back(moff.back() + nm), ids.push_back(s * 1000 + r);
    }
    // Rollout poses at the time points (every 5 steps), starting from the truth at point 2.
    for (int k = kHistoryTokens; k < kTokenSteps; ++k) {
      const auto d_st = device_view(st, "rollout_state"), d_pl = device_view(pl, "rollout_poly");
      const auto d_ty = device_view(ty, "rollout_type"), d_mt = device_view(mt, "rollout_map_type");
      const auto d_ao = device_view(aoff, "rollout_ao"), d_mo = device_view(moff, "rollout_mo");
      Batch b;
      b.n = R, b.ids = device_view(ids, "rollout_ids");
      const auto A = static_cast<std::int64_t>(aoff.back()), M = static_cast<std::int64_t>(moff.back());
      b.set<float>("agent_state", Tensor<float>(d_st.data(), Shape{A, kSteps, 5}), d_ao.data());
      b.set<std::int64_t>("agent_type", Tensor<std::int64_t>(d_ty.data(), Shape{A}), d_ao.data());
      b.set<float>("map_polyline", Tensor<float>(d_pl.data(), Shape{M, 11, 2}), d_mo.data());
      b.set<std::int64_t>("map_type", Tensor<std::int64_t>(d_mt.data(), Shape{M}), d_mo.data());
      model.forward(b, false);
      logits.resize(static_cast<std::size_t>(A * T * V));
      Kokkos::deep_copy(Kokkos::View<float*, HostSpace, Kokkos::MemoryUnmanaged>(logits.data(), logits.size()),
                        Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(model.logits().data(),
                                                                                      logits.size()));
      // Node (a, k - 1) predicts token k: the motion from point k to point k + 1.
      for (std::size_t a = 0; a < static_cast<std::size_t>(A); ++a) {
        const float* z = &logits[(a * static_cast<std::size_t>(T) + static_cast<std::size_t>(k - 1)) *
                                 static_cast<std::size_t>(V)];
        int top[16];
        const int K = std::min({o.top_k, V, 16});
        std::vector<int> order(static_cast<std::size_t>(V));  // small: once per agent and step
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + K, order.end(),
                          [&](int x, int y) { return z[x] > z[y] || (z[x] == z[y] && x < y); });
        double w[16], sum = 0;
        for (int i = 0; i < K; ++i)
          top[i] = order[static_cast<std::size_t>(i)], w[i] = std::exp(double(z[top[i]] - z[top[0]])), sum += w[i];
        double u = rng::uniform(rng::hash(o.seed, s, a, static_cast<std::uint64_t>(k))) * sum;
        int pick = top[K - 1];
        for (int i = 0; i < K; ++i) {
          if (u < w[i]) {
            pick = top[i];
            break;
          }
          u -= w[i];
        }
        // From the pose the tokens so far reconstruct (Note [drift-free tokens] in scene_graph.cpp).
        const double* p = &model.graph()
                               .agent_pose[(a * static_cast<std::size_t>(T) + static_cast<std::size_t>(k - 1)) * 3];
        double x = p[0], y = p[1], h = p[2];
        vocab.apply(static_cast<int>(std::clamp<std::int64_t>(ty[a], 0, kAgentTypes - 1)), pick, x, y, h);
        float* q = &st[(a * kSteps + static_cast<std::size_t>((k + 1) * kShift)) * 5];
        q[0] = static_cast<float>(x), q[1] = static_cast<float>(y), q[2] = static_cast<float>(h);
      }
    }
    // Scores per agent: rollouts vs truth at the future time points; constant velocity from step 10.
    for (std::size_t a = 0; a < na; ++a) {
      const float* truth = &state[(a0 + a) * kSteps * 5];
      const int tyi = static_cast<int>(std::clamp<long long>(type[a0 + a], 0, kAgentTypes - 1));
      double best_ade = 1e300, best_fde = 1e300;
      for (int r = 0; r < R; ++r) {
        const float* roll = &st[((static_cast<std::size_t>(r) * na + a) * kSteps) * 5];
        double ade = 0, fde = 0;
        for (int pt = kFirstFuturePoint; pt <= kTokenSteps; ++pt) {
          const std::size_t i = static_cast<std::size_t>(pt * kShift) * 5;
          const double e = std::hypot(roll[i] - truth[i], roll[i + 1] - truth[i + 1]);
          ade += e, fde = e;
        }
        ade /= kTokenSteps - kFirstFuturePoint + 1;
        best_ade = std::min(best_ade, ade), best_fde = std::min(best_fde, fde);
      }
      const float* h = truth + static_cast<std::size_t>(kHistoryTokens * kShift) * 5;  // step 10
      double cv_ade = 0, cv_fde = 0;
      for (int pt = kFirstFuturePoint; pt <= kTokenSteps; ++pt) {
        const double dt = (pt * kShift - kHistoryTokens * kShift) * 0.1;
        const std::size_t i = static_cast<std::size_t>(pt * kShift) * 5;
        const double e = std::hypot(h[0] + h[3] * dt - truth[i], h[1] + h[4] * dt - truth[i + 1]);
        cv_ade += e, cv_fde = e;
      }
      cv_ade /= kTokenSteps - kFirstFuturePoint + 1;
      TypeScores& ts = rep.types[static_cast<std::size_t>(tyi)];
      ++ts.agents, ts.min_ade += best_ade, ts.min_fde += best_fde, ts.cv_ade += cv_ade, ts.cv_fde += cv_fde;
    }
    if (static_cast<long long>(s) == o.keep_scene)
      keep(rep.scene, s, na, nm, state, a0, poly, m0, type, map_type, st, R);
    ++rep.scenes;
  }
  if (o.keep_scene >= 0 && rep.scene.scene < 0)
    throw Error("smart rollouts: scene " + std::to_string(o.keep_scene) + " is not among the " +
                    std::to_string(rep.scenes) + " scenes evaluated (or has no agents)",
                ExitCode::bad_input);
  for (TypeScores& t : rep.types)
    if (t.agents > 0) {
      const auto n = static_cast<double>(t.agents);
      t.min_ade /= n, t.min_fde /= n, t.cv_ade /= n, t.cv_fde /= n;
    }
  return rep;
}

void SceneRollouts::write(const std::string& path, int rollouts_count) const {
  if (scene < 0) throw Error("internal: no scene kept to write", ExitCode::failure);
  const h5::File f = h5::File::create(path);
  const std::uint64_t A = agents, M = segments, R = static_cast<std::uint64_t>(rollouts_count);
  h5::write(f, "map_polyline", {M, 11, 2}, map.data());
  h5::write(f, "map_type", {M}, map_type.data());
  h5::write(f, "agent_type", {A}, agent_type.data());
  h5::write(f, "truth", {A, static_cast<std::uint64_t>(kSteps), 2}, truth.data());
  h5::write(f, "rollouts", {R, A, static_cast<std::uint64_t>(kTokenSteps + 1), 2}, rollouts.data());
  h5::write_attr(f, "/", "scene", scene);
  h5::write_attr(f, "/", "history_steps", static_cast<long long>(kHistoryTokens * kShift + 1));
  h5::write_attr(f, "/", "rollout_start_point", static_cast<long long>(kHistoryTokens));
}

std::string RolloutReport::table() const {
  std::string out = "minADE / minFDE at 8 s (m) over " + std::to_string(scenes) + " scenes, " +
                    std::to_string(rollouts) + " rollouts per agent (top-" + std::to_string(top_k) +
                    " sampling) vs the constant-velocity baseline:\n";
  char line[200];
  std::snprintf(line, sizeof(line), "  %-11s %7s %9s %9s %12s %12s\n", "type", "agents", "minADE", "minFDE",
                "const-vel ADE", "const-vel FDE");
  out += line;
  for (int t = 0; t < kAgentTypes; ++t) {
    const TypeScores& s = types[static_cast<std::size_t>(t)];
    std::snprintf(line, sizeof(line), "  %-11s %7llu %9.3f %9.3f %12.3f %12.3f\n", kTypeNames[t],
                  static_cast<unsigned long long>(s.agents), s.min_ade, s.min_fde, s.cv_ade, s.cv_fde);
    out += line;
  }
  return out;
}

std::string RolloutReport::csv() const {
  std::string out = "type,agents,min_ade,min_fde,const_vel_ade,const_vel_fde\n";
  char line[200];
  for (int t = 0; t < kAgentTypes; ++t) {
    const TypeScores& s = types[static_cast<std::size_t>(t)];
    std::snprintf(line, sizeof(line), "%s,%llu,%.6f,%.6f,%.6f,%.6f\n", kTypeNames[t],
                  static_cast<unsigned long long>(s.agents), s.min_ade, s.min_fde, s.cv_ade, s.cv_fde);
    out += line;
  }
  return out;
}

}  // namespace hpct::smart
