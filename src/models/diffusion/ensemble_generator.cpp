// DDPM / DDIM ensemble sampling loops over chunks of (context, member) rows.
#include "models/diffusion/ensemble_generator.hpp"

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/rng.hpp"
#include "models/diffusion/diffusion_linear_skip.hpp"

namespace hpct {

namespace {
// Sampling noise has its own key so it never repeats a training draw.
std::uint64_t sampling_key(std::uint64_t seed) { return rng::hash(seed, rng::kNoiseStream, 0x53414d504c45ull); }
}  // namespace

std::vector<int> EnsembleGenerator::visited_timesteps(const std::string& method, int steps, int T) {
  std::vector<int> visit;
  if (method == "ddpm") {
    for (int i = T - 1; i >= 0; --i) visit.push_back(i);
  } else if (method == "ddim") {
    const int S = steps <= 0 ? T : std::min(steps, T);
    // S timesteps evenly spaced over [0, T-1], always including T-1 and 0.
    for (int k = S - 1; k >= 0; --k)
      visit.push_back(S == 1 ? T - 1 : static_cast<int>(std::lround(static_cast<double>(k) * (T - 1) / (S - 1))));
  } else {
    throw Error("unknown sampling method '" + method + "' (ddpm or ddim)", ExitCode::bad_input);
  }
  return visit;
}

EnsembleGenerator::EnsembleGenerator(DiffusionNet<float>& net, const NoiseSchedule& schedule,
                                     const DiffusionNormalisation& norm, const SamplingOptions& options,
                                     int chunk_rows)
    : net_(net), schedule_(schedule), norm_(norm), opt_(options) {
  const int cap = chunk_rows > 0 ? chunk_rows : net.capacity();
  if (cap > net.capacity()) throw Error("internal: sampling chunk larger than the network's capacity");
  if (opt_.members < 1) throw Error("sampling needs at least one member", ExitCode::bad_input);
  if (cap < opt_.members)
    throw Error("sampling chunk must hold at least one context's members", ExitCode::bad_input);
  visit_ = visited_timesteps(opt_.method, opt_.steps, schedule.steps);
  contexts_per_chunk_ = cap / opt_.members;
  const int nc = net.config().n_context, nf = net.config().n_fine;
  c_raw_ = View2<float>("sample_c_raw", cap, nc);
  c_ = View2<float>("sample_c", cap, nc);
  const int nn_c = net.config().net_context();
  c_net_ = nn_c < nc ? View2<float>("sample_c_net", cap, nn_c) : c_;
  x_ = View2<float>("sample_x", cap, nf);
  t_ = View1<float>("sample_t", cap);
  pair_ids_ = View1<std::uint64_t>("sample_pair_ids", cap);
  h_c_raw_ = Kokkos::create_mirror_view(c_raw_);
  h_x_ = Kokkos::create_mirror_view(x_);
  h_pair_ids_ = Kokkos::create_mirror_view(pair_ids_);
}

void EnsembleGenerator::run_chunk(int rows) {
  const int T = schedule_.steps;
  const auto x = x_;
  const auto ids = pair_ids_;
  const long d = static_cast<long>(x_.extent(1));
  const std::uint64_t key = sampling_key(opt_.seed);
  const auto T64 = static_cast<std::uint64_t>(T);
  Kokkos::parallel_for(
      "sample_noise0", range(0, static_cast<long>(rows) * d), KOKKOS_LAMBDA(const long idx) {
        const long i = idx / d, j = idx % d;
        x(i, j) = static_cast<float>(rng::normal(rng::hash(key, ids(i), T64, static_cast<std::uint64_t>(j))));
      });
  norm_.normalise_context(c_raw_, c_, rows);
  if (c_net_.data() != c_.data()) take_first_columns(c_, c_net_, rows);
  const bool ddpm = opt_.method == "ddpm";
  for (std::size_t k = 0; k < visit_.size(); ++k) {
    const int ti = visit_[k];
    Kokkos::deep_copy(Kokkos::subview(t_, Kokkos::make_pair(0, rows)), static_cast<float>(ti));
    const auto& eps = net_.forward(x_, c_net_, t_, rows);
    const double abar = schedule_.abar[static_cast<std::size_t>(ti)];
    const double abar_prev = ddpm ? (ti > 0 ? schedule_.abar[static_cast<std::size_t>(ti - 1)] : 1.0)
                                  : (k + 1 < visit_.size() ? schedule_.abar[static_cast<std::size_t>(visit_[k + 1])]
                                                           : 1.0);
    const double sa = std::sqrt(abar), sb = std::sqrt(1.0 - abar);
    const double pa = std::sqrt(abar_prev), pb = std::sqrt(1.0 - abar_prev);
    const double clip = opt_.clip;
    const bool v_target = net_.config().target == "v";
    // DDPM: x_{t-1} = mu + sigma z with the posterior mean
    //   mu = sqrt(abar_prev) beta / (1 - abar) x0_hat + sqrt(alpha) (1 - abar_prev) / (1 - abar) x_t.
    // DDIM (eta = 0): x_prev = sqrt(abar_prev) x0_hat + sqrt(1 - abar_prev) eps', eps' the noise
    // implied by the (clipped) x0_hat.
    const double beta = schedule_.beta[static_cast<std::size_t>(ti)];
    const double m0 = pa * beta / (1.0 - abar);
    const double mt = std::sqrt(schedule_.alpha[static_cast<std::size_t>(ti)]) * (1.0 - abar_prev) / (1.0 - abar);
    const double sigma = ddpm ? std::sqrt(schedule_.posterior_variance[static_cast<std::size_t>(ti)]) : 0.0;
    const auto step = static_cast<std::uint64_t>(ti);
    Kokkos::parallel_for(
        "sample_step", range(0, static_cast<long>(rows) * d), KOKKOS_LAMBDA(const long idx) {
          const long i = idx / d, j = idx % d;
          const double xt = static_cast<double>(x(i, j));
          const double out = static_cast<double>(eps(i, j));
          double x0 = v_target ? sa * xt - sb * out : (xt - sb * out) / sa;
          if (clip > 0) x0 = x0 > clip ? clip : (x0 < -clip ? -clip : x0);
          double v;
          if (ddpm) {
            v = m0 * x0 + mt * xt;
            if (sigma > 0) v += sigma * rng::normal(rng::hash(key, ids(i), step, static_cast<std::uint64_t>(j)));
          } else {
            v = pa * x0 + pb * (xt - sa * x0) / sb;
          }
          x(i, j) = static_cast<float>(v);
        });
  }
  norm_.denormalise_fine(x_, rows);
}

void EnsembleGenerator::sample(const float* contexts, std::uint64_t n, std::uint64_t first_index, float* out,
                               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  const auto M = static_cast<std::uint64_t>(opt_.members);
  const std::uint64_t nc = c_raw_.extent(1), nf = x_.extent(1);
  for (std::uint64_t first = 0; first < n; first += static_cast<std::uint64_t>(contexts_per_chunk_)) {
    const std::uint64_t k = std::min<std::uint64_t>(static_cast<std::uint64_t>(contexts_per_chunk_), n - first);
    const auto rows = static_cast<int>(k * M);
    Heartbeat::beat_current("sampling a batch of members", std::string());  // Note [the tools' guard]
    for (std::uint64_t a = 0; a < k; ++a)
      for (std::uint64_t m = 0; m < M; ++m) {
        const std::uint64_t r = a * M + m;
        std::memcpy(&h_c_raw_(r, 0), contexts + (first + a) * nc, nc * sizeof(float));
        h_pair_ids_(r) = (first_index + first + a) * M + m;
      }
    Kokkos::deep_copy(c_raw_, h_c_raw_);
    Kokkos::deep_copy(pair_ids_, h_pair_ids_);
    run_chunk(rows);
    Kokkos::deep_copy(h_x_, x_);
    std::memcpy(out + first * M * nf, h_x_.data(), static_cast<std::size_t>(rows) * nf * sizeof(float));
    if (progress) progress(first + k, n);
  }
}

void EnsembleGenerator::stage_chunk(const View2<float>& contexts, const View1<std::uint64_t>& ids,
                                    std::uint64_t first, std::uint64_t k) {
  const auto c_raw = c_raw_;
  const auto pair_ids = pair_ids_;
  const auto M = static_cast<long>(opt_.members), nc = static_cast<long>(c_raw_.extent(1));
  const auto base = static_cast<long>(first);
  Kokkos::parallel_for(
      "sample_stage", range(0, static_cast<long>(k) * M * nc), KOKKOS_LAMBDA(const long idx) {
        const long r = idx / nc, j = idx % nc;  // r = context * M + member
        c_raw(r, j) = contexts(base + r / M, j);
        // As the host overload's ids: (global context index) * M + member.
        if (j == 0)
          pair_ids(r) = ids(base + r / M) * static_cast<std::uint64_t>(M) + static_cast<std::uint64_t>(r % M);
      });
}

void EnsembleGenerator::sample(const View2<float>& contexts, std::uint64_t n, std::uint64_t first_index,
                               const View2<float>& out) {
  const View1<std::uint64_t> ids("sample_context_ids", n);
  Kokkos::parallel_for(
      "sample_context_ids", range(std::uint64_t{0}, n),
      KOKKOS_LAMBDA(const std::uint64_t i) { ids(i) = first_index + i; });
  sample(contexts, ids, n, out);
}

void EnsembleGenerator::sample(const View2<float>& contexts, const View1<std::uint64_t>& ids, std::uint64_t n,
                               const View2<float>& out) {
  const auto M = static_cast<std::uint64_t>(opt_.members);
  for (std::uint64_t first = 0; first < n; first += static_cast<std::uint64_t>(contexts_per_chunk_)) {
    const std::uint64_t k = std::min<std::uint64_t>(static_cast<std::uint64_t>(contexts_per_chunk_), n - first);
    const auto rows = static_cast<int>(k * M);
    Heartbeat::beat_current("sampling a batch of members", std::string());  // Note [the tools' guard]
    stage_chunk(contexts, ids, first, k);
    run_chunk(rows);
    Kokkos::deep_copy(Kokkos::subview(out, Kokkos::make_pair(first * M, first * M + k * M), Kokkos::ALL()),
                      Kokkos::subview(x_, Kokkos::make_pair(0, rows), Kokkos::ALL()));
  }
}

}  // namespace hpct
