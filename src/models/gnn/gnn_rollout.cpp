// The gnn model's autoregressive rollout for evaluation (see GnnModel::rollout_errors): the
// boundary strip forced by the truth at every step, errors against the truth and persistence.
#include <utility>

#include "models/gnn/gnn_model.hpp"

namespace hpct {

namespace gnn_kernels {

// out(b N + p, s) = the batch's state at time k (0: t - 1, 1: t), field layout [S, 2, N].
void states_from_batch(const View2<float>& out, const float* state, int k, int n, int N, int S) {
  nn::for_each_cell(
      "gnn_roll_init", n * N, S,
      KOKKOS_LAMBDA(const int r, const int s) { out(r, s) = state[((r / N * S + s) * 2 + k) * N + r % N]; });
}

// The network input from the two latest states and the forcing of rollout step `step`.
void inputs_from_states(const View2<float>& x, const View2<float>& prev, const View2<float>& cur,
                        const float* forcing, const float* statics, int step, const View1<float>& mean,
                        const View1<float>& inv_std, int n, int N, int S, int F, int K, int A) {
  nn::for_each_cell(
      "gnn_roll_in", n * N, 2 * S + F + K, KOKKOS_LAMBDA(const int r, const int c) {
        const int b = r / N, p = r % N;
        float v;
        if (c < S) v = prev(r, c);
        else if (c < 2 * S) v = cur(r, c - S);
        else if (c < 2 * S + F) v = forcing[((b * F + c - 2 * S) * A + step) * N + p];
        else v = statics[(b * K + c - 2 * S - F) * N + p];
        x(r, c) = (v - mean(c)) * inv_std(c);
      });
}

// next = cur + the predicted increment inside, the truth of step `step` on the boundary strip.
void advance(const View2<float>& next, const View2<float>& cur, const View2<float>& out, const float* targets,
             const View1<float>& mask, const View1<float>& dmean, const View1<float>& dstd, int step, int n, int N,
             int S, int A) {
  nn::for_each_cell(
      "gnn_roll_step", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
        const float truth = targets[((r / N * S + s) * A + step) * N + r % N];
        next(r, s) = mask(r % N) > 0 ? cur(r, s) + out(r, s) * dstd(s) + dmean(s) : truth;
      });
}

// Interior sum of (a(r, s) - truth of step `step`)^2; with a_from_batch, a is the batch's state at t.
double step_sse(const View2<float>& a, const float* state, bool a_from_batch, const float* targets,
                const View1<float>& mask, int s, int step, int n, int N, int S, int A) {
  return sum_over(
      "gnn_roll_sse", 0, n * N, KOKKOS_LAMBDA(const int r, double& acc) {
        const int b = r / N, p = r % N;
        const double v = a_from_batch ? state[((b * S + s) * 2 + 1) * N + p] : a(r, s);
        const double e = v - targets[((b * S + s) * A + step) * N + p];
        acc += mask(p) * e * e;
      });
}

}  // namespace gnn_kernels

void GnnModel::rollout_errors(const Batch& b, std::vector<double>& model, std::vector<double>& persistence) {
  if (b.n == 0) return;
  const int N = c_.net.ny * c_.net.nx, S = c_.states, F = c_.forcings, K = c_.statics, n = b.n;
  const Tensor<float> targets = b.get("targets");
  const int A = static_cast<int>(targets.shape().dim[2]);
  model.resize(static_cast<std::size_t>(A * S), 0.0);
  persistence.resize(static_cast<std::size_t>(A * S), 0.0);
  const auto rows = static_cast<std::size_t>(net_.capacity()) * static_cast<std::size_t>(N);
  if (roll_[0].extent(0) == 0)  // evaluation only: allocated at the first rollout, never in a training step
    for (View1<float>& v : roll_) v = View1<float>("gnn_rollout", rows * static_cast<std::size_t>(S));
  const auto state_of = [&](int i) { return View2<float>(roll_[i].data(), static_cast<std::size_t>(n * N), S); };
  const float* state = b.get("state").data();
  const float* forcing = F ? b.get("forcing").data() : nullptr;
  const float* statics = K ? b.get("static").data() : nullptr;
  int prev = 0, cur = 1, next = 2;
  gnn_kernels::states_from_batch(state_of(prev), state, 0, n, N, S);
  gnn_kernels::states_from_batch(state_of(cur), state, 1, n, N, S);
  for (int k = 0; k < A; ++k) {
    gnn_kernels::inputs_from_states(x_.matrix(), state_of(prev), state_of(cur), forcing, statics, k, in_mean_,
                                    in_inv_std_, n, N, S, F, K, A);
    const Tensor<float>& out = net_.forward(x_, n);
    gnn_kernels::advance(state_of(next), state_of(cur), out.matrix(), targets.data(), mask_, diff_mean_, diff_std_,
                         k, n, N, S, A);
    for (int s = 0; s < S; ++s) {
      model[static_cast<std::size_t>(k * S + s)] += gnn_kernels::step_sse(state_of(next), state, false,
                                                                          targets.data(), mask_, s, k, n, N, S, A);
      persistence[static_cast<std::size_t>(k * S + s)] += gnn_kernels::step_sse(state_of(next), state, true,
                                                                                targets.data(), mask_, s, k, n, N,
                                                                                S, A);
    }
    prev = cur, cur = next, next = 3 - prev - cur;
  }
}

}  // namespace hpct
