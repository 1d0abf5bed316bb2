// The gnn outputs that lean on the state a day before (gnn_output day_before_blend and
// day_before_anomaly): the pull they add to the predicted increment and its gradient.
#pragma once

#include <cmath>

#include "core/kokkos_compat.hpp"

namespace hpct::gnn_kernels {

// Note [day-before blend]: with gnn_output day_before_blend the network has 2S outputs per point, an
// increment o and a gate q per state variable, and the next state inside the boundary is
//   next = cur + sigmoid(q) (day_before - cur) + o diff_std + diff_mean,
// day_before the derived forcing state_day_before of the step (the state one day before the target
// time, known at the initial time for leads up to a day). At a lead of one day it is the
// persistence forecast, and through the day the repeat of the last day's cycle: a rolled-out
// increment model has to rebuild that value from its normalised inputs through every layer, while
// the gate moves the next state toward it directly, by how much it learns from the lead time, the
// state and the forcings. The gate multiplies the residual, so d(next)/d(cur) = 1 - sigmoid(q)
// and d(next)/dq = sigmoid'(q) (day_before - cur); the day-before state is data (no gradient).
//
// Note [day-before anomaly]: gnn_output day_before_anomaly adds the day before's change over the
// step, tendency = day_before(t + 1) - day_before(t) (derived forcing tendency_day_before), weighted
// by 1 - gate:
//   next = day_before(t + 1) + (1 - g) (cur - day_before(t)) + o diff_std + diff_mean,  g = sigmoid(q),
// the blend plus (1 - g) tendency. Without the network's increment, the departure from the day
// before decays by 1 - g a step: the next hours repeat the last day's course shifted by today's
// departure, which fades toward the persistence forecast at a lead of one day. That form alone,
// 1 - g = 0.8, forecasts the ERA5 2 m temperature of docs/gnn-results.md's training days (scored on their
// last 20%) with 1.62 K RMSE at 10 h against persistence's 2.40, and ties persistence at 24 h: the
// blend has to learn the day's course from its inputs, the anomaly starts from it.
// d(next)/d(cur) = 1 - g as for the blend, and d(next)/dq = sigmoid'(q) (day_before(t) - cur),
// day_before(t) = day_before(t + 1) - tendency.
KOKKOS_INLINE_FUNCTION float gate_of(float q) { return 1.0f / (1.0f + expf(-q)); }

// The day-before state (db) or tendency (dt) forcing channel c + s at row r, rollout step `step`.
KOKKOS_INLINE_FUNCTION float day_before_channel(const float* forcing, int c, int r, int s, int step, int N, int F,
                                                int A) {
  return forcing[((r / N * F + c + s) * A + step) * N + r % N];
}

// The pull added to cur + increment at row r, variable s (0 without a day-before output: db < 0):
// sigmoid(q) (day_before - cur), and with the anomaly (dt >= 0) + (1 - sigmoid(q)) tendency.
KOKKOS_INLINE_FUNCTION float blend_pull(const View2<float>& out, float cur, const float* forcing, int db, int dt,
                                        int r, int s, int step, int N, int S, int F, int A) {
  if (db < 0) return 0.0f;
  const float gate = gate_of(out(r, S + s));
  const float pull = gate * (day_before_channel(forcing, db, r, s, step, N, F, A) - cur);
  return dt < 0 ? pull : pull + (1.0f - gate) * day_before_channel(forcing, dt, r, s, step, N, F, A);
}

// d(next)/dq at row r, variable s: sigmoid'(q) (the day-before state at the start of the step - cur).
KOKKOS_INLINE_FUNCTION float gate_slope(const View2<float>& out, float cur, const float* forcing, int db, int dt,
                                        int r, int s, int step, int N, int S, int F, int A) {
  const float gate = gate_of(out(r, S + s));
  float start = day_before_channel(forcing, db, r, s, step, N, F, A);
  if (dt >= 0) start -= day_before_channel(forcing, dt, r, s, step, N, F, A);
  return gate * (1.0f - gate) * (start - cur);
}

}  // namespace hpct::gnn_kernels
