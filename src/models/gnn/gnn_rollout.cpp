// The gnn model's autoregressive rollout for evaluation (see GnnModel::rollout_errors): the
// boundary strip forced by the truth at every step, errors against the truth and persistence.
#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "models/gnn/day_before.hpp"
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
        if (c < S) v = cur(r, c) - prev(r, c);
        else if (c < 2 * S) v = cur(r, c - S);
        else if (c < 2 * S + F) v = forcing[((b * F + c - 2 * S) * A + step) * N + p];
        else v = statics[(b * K + c - 2 * S - F) * N + p];
        x(r, c) = (v - mean(c)) * inv_std(c);
      });
}

// next = cur + the predicted increment (and the blend's pull) inside, the truth of step `step` on
// the boundary strip.
void advance(const View2<float>& next, const View2<float>& cur, const View2<float>& out, const float* targets,
             const View1<float>& mask, const View1<float>& dmean, const View1<float>& dstd, const float* forcing,
             int db, int dt, int step, int n, int N, int S, int F, int A) {
  nn::for_each_cell(
      "gnn_roll_step", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
        const float truth = targets[((r / N * S + s) * A + step) * N + r % N];
        const float c = cur(r, s);
        next(r, s) = mask(r % N) > 0 ? c + out(r, s) * dstd(s) + dmean(s) +
                                           blend_pull(out, c, forcing, db, dt, r, s, step, N, S, F, A)
                                     : truth;
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

void GnnModel::rollout_errors(const Batch& b, std::vector<double>& model, std::vector<double>& persistence,
                              std::vector<float>* forecast, int forecast_samples) {
  if (b.n == 0) return;
  const int N = c_.net.ny * c_.net.nx, S = c_.states, F = c_.forcings, K = c_.statics, n = b.n;
  const Tensor<float> targets = b.get("targets");
  const int A = static_cast<int>(targets.shape().dim[2]);
  model.resize(static_cast<std::size_t>(A * S), 0.0);
  persistence.resize(static_cast<std::size_t>(A * S), 0.0);
  const auto rows = static_cast<std::size_t>(net_->capacity()) * static_cast<std::size_t>(N);
  if (roll_[0].extent(0) == 0)  // evaluation only: allocated at the first rollout, never in a training step
    for (View1<float>& v : roll_) v = View1<float>("gnn_rollout", rows * static_cast<std::size_t>(S));
  const auto state_of = [&](int i) { return View2<float>(roll_[i].data(), static_cast<std::size_t>(n * N), S); };
  const float* state = b.get("state").data();
  const float* forcing = F ? b.get("forcing").data() : nullptr;
  const float* statics = K ? b.get("static").data() : nullptr;
  const int m = std::min(forecast_samples, n);
  if (forecast) forecast->assign(static_cast<std::size_t>(m) * A * S * N, 0.0f);
  int prev = 0, cur = 1, next = 2;
  gnn_kernels::states_from_batch(state_of(prev), state, 0, n, N, S);
  gnn_kernels::states_from_batch(state_of(cur), state, 1, n, N, S);
  for (int k = 0; k < A; ++k) {
    gnn_kernels::inputs_from_states(x_.matrix(), state_of(prev), state_of(cur), forcing, statics, k, in_mean_,
                                    in_inv_std_, n, N, S, F, K, A);
    const Tensor<float>& out = net_->forward(x_, n);
    gnn_kernels::advance(state_of(next), state_of(cur), out.matrix(), targets.data(), mask_, diff_mean_, diff_std_,
                         forcing, c_.day_before, c_.day_tendency, k, n, N, S, F, A);
    for (int s = 0; s < S; ++s) {
      model[static_cast<std::size_t>(k * S + s)] += gnn_kernels::step_sse(state_of(next), state, false,
                                                                          targets.data(), score_, s, k, n, N, S, A);
      persistence[static_cast<std::size_t>(k * S + s)] += gnn_kernels::step_sse(state_of(next), state, true,
                                                                                targets.data(), score_, s, k, n, N,
                                                                                S, A);
    }
    if (forecast) {  // rows [0, m N) of the new state [n N, S] into [m][A][S][N]
      const auto h = to_host(Kokkos::subview(state_of(next), std::make_pair(0, m * N), Kokkos::ALL()));
      for (int r = 0; r < m; ++r)
        for (int s = 0; s < S; ++s)
          for (int p = 0; p < N; ++p)
            (*forecast)[((static_cast<std::size_t>(r) * A + k) * S + s) * N + p] = h(r * N + p, s);
    }
    prev = cur, cur = next, next = 3 - prev - cur;
  }
}

}  // namespace hpct

namespace hpct {

namespace gnn_kernels {

// The rollout loss of step `step`: sum over rows of w mask sum_s vw(s) ((next - truth) / diff_std)^2;
// with grad, g = 2 w mask vw(s) (next - truth) / diff_std^2 / normaliser (dL/d(next)).
double rollout_step_loss(const View2<float>& next, const float* targets, const View1<float>& mask,
                         const View1<float>& vw, const View1<float>& dstd, const View2<float>& g, bool grad,
                         double w, double normaliser, int step, int n, int N, int S, int A) {
  const float gscale = static_cast<float>(2.0 * w / normaliser);
  if (grad)
    nn::for_each_cell(
        "gnn_roll_grad", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
          const float e = next(r, s) - targets[((r / N * S + s) * A + step) * N + r % N];
          g(r, s) = gscale * mask(r % N) * vw(s) * e / (dstd(s) * dstd(s));
        });
  return w * sum_over(
                 "gnn_roll_loss", 0, n * N, KOKKOS_LAMBDA(const int r, double& acc) {
                   double e2 = 0;
                   for (int s = 0; s < S; ++s) {
                     const double e = (static_cast<double>(next(r, s)) -
                                       targets[((r / N * S + s) * A + step) * N + r % N]) /
                                      dstd(s);
                     e2 += vw(s) * e * e;
                   }
                   acc += mask(r % N) * e2;
                 });
}

// dL/d(out) of a step from dL/d(the state it predicts): interior only (the boundary is the truth);
// with the blend also dL/dq (Note [day-before blend], Note [day-before anomaly] in day_before.hpp).
void rollout_out_grad(const View2<float>& d_out, const View2<float>& g_next, const View1<float>& mask,
                      const View1<float>& dstd, const View2<float>& out, const View2<float>& cur,
                      const float* forcing, int db, int dt, int step, int n, int N, int S, int F, int A) {
  nn::for_each_cell(
      "gnn_roll_dout", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
        const float g = mask(r % N) * g_next(r, s);
        d_out(r, s) = g * dstd(s);
        if (db >= 0) d_out(r, S + s) = g * gate_slope(out, cur(r, s), forcing, db, dt, r, s, step, N, S, F, A);
      });
}

// Through step k's input x_k = norm(s_k - s_{k-1}, s_k, ...) and its residual s_{k+1} = s_k + ...:
// g_cur += mask g_next (1 - gate with the blend) + dx[:, S + s] / std + dx[:, s] / std, and
// (with_prev) g_prev -= dx[:, s] / std.
void rollout_propagate(const View2<float>& g_cur, const View2<float>& g_prev, const View2<float>& g_next,
                       const View2<float>& dx, const View1<float>& mask, const View1<float>& inv_std,
                       const View2<float>& out, bool blend, bool with_prev, int n, int N, int S) {
  nn::for_each_cell(
      "gnn_roll_back", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
        const float d_tendency = dx(r, s) * inv_std(s);
        const float keep = blend ? 1.0f - gate_of(out(r, S + s)) : 1.0f;
        g_cur(r, s) += mask(r % N) * g_next(r, s) * keep + dx(r, S + s) * inv_std(S + s) + d_tendency;
        if (with_prev) g_prev(r, s) -= d_tendency;
      });
}

}  // namespace gnn_kernels

// Note [rollout training]: states s_{-1}, s_0 come from the batch; step k predicts s_{k+1} from
// x_k = norm(s_k - s_{k-1}, s_k, forcing k, static), interior s_k + increment, boundary the truth. The
// loss is the mean over the steps of each step's one-step loss. Backward goes through the steps in
// reverse, recomputing step k's activations from the stored x_k (one step's activations are kept,
// not A), and carries dL/ds_k through the residual and through both input slots of the next two
// steps. Parameter gradients add up over the steps; the gradient-ready reports wait for the last
// pass (Note [repeated backward] in nn/parameters.hpp). With ar_steps 1 this is the one-step loss.
// `steps` may be fewer than the batch's targets (a stage of ar_steps_schedule): the first `steps`.
double GnnModel::rollout_loss(const Batch& b, int steps, bool grad, double normaliser) {
  const int N = c_.net.ny * c_.net.nx, S = c_.states, F = c_.forcings, K = c_.statics, n = b.n;
  const auto slot = static_cast<std::size_t>(net_->capacity()) * static_cast<std::size_t>(N);
  const auto states = [&](int k) {  // s_{k-1}
    return View2<float>(train_states_.data() + static_cast<std::size_t>(k) * slot * S,
                        static_cast<std::size_t>(n * N), S);
  };
  const auto grads = [&](int k) {
    return View2<float>(train_grads_.data() + static_cast<std::size_t>(k) * slot * S,
                        static_cast<std::size_t>(n * N), S);
  };
  const auto inputs_of = [&](int k) {
    return Tensor<float>(train_x_.data() + static_cast<std::size_t>(k) * slot * c_.net.d_in,
                         Shape{static_cast<std::int64_t>(slot), c_.net.d_in});
  };
  const Tensor<float> targets = b.get("targets");
  const int A = static_cast<int>(targets.shape().dim[2]);  // the targets' (and forcing's) steps per sample
  if (steps > A || steps > std::max(c_.ar_steps, 1))
    throw Error(strf("internal: a %d-step rollout over %d targets (buffers for %d)", steps, A, c_.ar_steps));
  const float* state = b.get("state").data();
  const float* forcing = F ? b.get("forcing").data() : nullptr;
  const float* statics = K ? b.get("static").data() : nullptr;
  const double w = 1.0 / (static_cast<double>(interior_) * S * steps);
  gnn_kernels::states_from_batch(states(0), state, 0, n, N, S);
  gnn_kernels::states_from_batch(states(1), state, 1, n, N, S);
  double loss = 0;
  const Tensor<float>* out = nullptr;  // the net's output buffer (the same every forward)
  for (int k = 0; k < steps; ++k) {
    const Tensor<float> x = inputs_of(k);
    gnn_kernels::inputs_from_states(x.matrix(), states(k), states(k + 1), forcing, statics, k, in_mean_,
                                    in_inv_std_, n, N, S, F, K, A);
    out = &net_->forward(x, n);
    gnn_kernels::advance(states(k + 2), states(k + 1), out->matrix(), targets.data(), mask_, diff_mean_, diff_std_,
                         forcing, c_.day_before, c_.day_tendency, k, n, N, S, F, A);
    loss += gnn_kernels::rollout_step_loss(states(k + 2), targets.data(), score_, weights_, diff_std_, grads(k + 2),
                                           grad, w, normaliser, k, n, N, S, A);
  }
  if (!grad) return loss;
  for (int k = steps - 1; k >= 0; --k) {
    const Tensor<float> x = inputs_of(k);
    if (k < steps - 1) out = &net_->forward(x, n);  // the last step's activations are still there
    gnn_kernels::rollout_out_grad(net_->output_grad().matrix(), grads(k + 2), mask_, diff_std_, out->matrix(),
                                  states(k + 1), forcing, c_.day_before, c_.day_tendency, k, n, N, S, F, A);
    net_->store().hold_ready(k > 0);
    net_->backward(x, n, k > 0);
    if (k > 0)  // s_k = states(k + 1) is a prediction; s_{k-1} too when k >= 2
      gnn_kernels::rollout_propagate(grads(k + 1), grads(k), grads(k + 2), net_->input_grad().matrix(), mask_,
                                     in_inv_std_, out->matrix(), c_.day_before >= 0, k >= 2, n, N, S);
  }
  net_->store().hold_ready(false);
  return loss;
}

}  // namespace hpct
