// The gnn model: construction, inputs, loss, metrics and predict (see gnn_model.hpp; its data-dependent
// state, positions, mask, weights and normalisation: gnn_points.cpp).
#include "models/gnn/gnn_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "core/real_text.hpp"
#include "models/gnn/day_before.hpp"
#include "models/gnn/sphere_mesh.hpp"

namespace hpct {

// Note [tendency input]: the model sees the state at t and the last step's change
// state(t) - state(t - 1), the change normalised by the increments' statistics (diff_mean,
// diff_std), not the two states each normalised by the state's. The two carry the same
// information, but an hour's change of the depth is about 1% of its spread: as two nearly equal
// inputs of order 1 the network had to amplify their difference ~100x to read the tendency, and
// it learned the depth and the tracer (the variables whose change is smallest against their
// spread) no better than persistence, and drifted in rollouts. Normalised, the tendency is of
// order 1 like the target.
namespace gnn_kernels {

// The row layouts of the netcdf source's fields (docs/gnn.md): state [S, 2, N], targets [S, A, N],
// forcing [F, A, N], static [K, N]; x(b N + p, c) = (value - mean(c)) * inv_std(c) with channels
// [state(t) - state(t-1) S, state(t) S, forcing(t+1) F, static K] (Note [tendency input]).
void build_inputs(const View2<float>& x, const float* state, const float* forcing, const float* statics,
                  const View1<float>& mean, const View1<float>& inv_std, int n, int N, int S, int F, int K, int A) {
  nn::for_each_cell(
      "gnn_inputs", n * N, 2 * S + F + K, KOKKOS_LAMBDA(const int r, const int c) {
        const int b = r / N, p = r % N;
        float v;
        if (c < S) v = state[((b * S + c) * 2 + 1) * N + p] - state[((b * S + c) * 2) * N + p];
        else if (c < 2 * S) v = state[((b * S + c - S) * 2 + 1) * N + p];
        else if (c < 2 * S + F) v = forcing[((b * F + c - 2 * S) * A) * N + p];
        else v = statics[(b * K + c - 2 * S - F) * N + p];
        x(r, c) = (v - mean(c)) * inv_std(c);
      });
}

// t(b N + p, s) = ((targets[b, s, 0, p] - state[b, s, 1, p]) - diff_mean(s)) / diff_std(s).
void build_increments(const View2<float>& t, const float* state, const float* targets, const View1<float>& dmean,
                      const View1<float>& dstd, int n, int N, int S, int A) {
  nn::for_each_cell(
      "gnn_increments", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
        const int b = r / N, p = r % N;
        const float d = targets[((b * S + s) * A) * N + p] - state[((b * S + s) * 2 + 1) * N + p];
        t(r, s) = (d - dmean(s)) / dstd(s);
      });
}

// Sum over rows [0, n N) of mask(p) * sum_s vw(s) (y - t)^2 * w; with grad,
// g = 2 mask vw(s) (y - t) w / normaliser (vw: the per-variable loss weights).
double masked_squared_error(const View2<float>& y, const View2<float>& t, const View1<float>& mask,
                            const View1<float>& vw, const View2<float>& g, bool grad, double w, double normaliser,
                            int n, int N, int S) {
  const float gscale = static_cast<float>(2.0 * w / normaliser);
  if (grad)
    nn::for_each_cell(
        "gnn_loss_grad", n * N, S,
        KOKKOS_LAMBDA(const int r, const int s) { g(r, s) = gscale * mask(r % N) * vw(s) * (y(r, s) - t(r, s)); });
  return w * sum_over(
                 "gnn_loss", 0, n * N, KOKKOS_LAMBDA(const int r, double& acc) {
                   double e = 0;
                   for (int s = 0; s < S; ++s) {
                     const double d = static_cast<double>(y(r, s)) - static_cast<double>(t(r, s));
                     e += vw(s) * d * d;
                   }
                   acc += mask(r % N) * e;
                 });
}

// Interior sums of the squared 1-step errors in data units: the model's (y - t) diff_std and
// persistence's (the whole step, t diff_std + diff_mean), for variable s.
void add_rmse_sums(const View2<float>& y, const View2<float>& t, const View1<float>& mask,
                   const View1<float>& dmean, const View1<float>& dstd, int n, int N, int s, double& model,
                   double& persistence) {
  model += sum_over(
      "gnn_rmse_model", 0, n * N, KOKKOS_LAMBDA(const int r, double& acc) {
        const double e = (static_cast<double>(y(r, s)) - t(r, s)) * dstd(s);
        acc += mask(r % N) * e * e;
      });
  persistence += sum_over(
      "gnn_rmse_persist", 0, n * N, KOKKOS_LAMBDA(const int r, double& acc) {
        const double e = static_cast<double>(t(r, s)) * dstd(s) + dmean(s);
        acc += mask(r % N) * e * e;
      });
}

// y(b, s, p) = state(t)[b, s, p] + out(b N + p, s) diff_std(s) + diff_mean(s): the forecast in data
// units, [n][S][N].
void forecast_from_increments(const View1<float>& y, const float* state, const View2<float>& out,
                              const View1<float>& dmean, const View1<float>& dstd, int first, int n, int N, int S) {
  nn::for_each_cell(
      "gnn_forecast", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
        const int b = first + r / N, p = r % N;
        y((static_cast<std::size_t>(b) * S + s) * N + p) = state[((b * S + s) * 2 + 1) * N + p] +
                                                           out(r, s) * dstd(s) + dmean(s);
      });
}

// Note [day-before blend] (day_before.hpp) as a normalised increment: y(r, s) = out(r, s) +
// pull / diff_std(s), the pull of the blend (or of the anomaly) at the sample's first target.
void blend_increments(const View2<float>& y, const View2<float>& out, const float* state, const float* forcing,
                      const View1<float>& dstd, int db, int dt, int n, int N, int S, int F, int A) {
  nn::for_each_cell(
      "gnn_blend", n * N, S, KOKKOS_LAMBDA(const int r, const int s) {
        const int b = r / N, p = r % N;
        const float cur = state[((b * S + s) * 2 + 1) * N + p];
        y(r, s) = out(r, s) + blend_pull(out, cur, forcing, db, dt, r, s, 0, N, S, F, A) / dstd(s);
      });
}

}  // namespace gnn_kernels

namespace {

// Note [graph from positions]: the icosahedral mesh's graph depends on where the data's points are,
// which the model learns after it is built: from the training data's grid field (set_data_stats) or
// from a weights file's graph/latitude and graph/longitude (load_extra_datasets). Until then the net
// stands on a provisional graph over N points spread evenly on the sphere (a Fibonacci lattice) and
// the icosahedron unrefined (its buffers the smallest):
// the parameters' shapes do not depend on the graph, so when the positions come the net is rebuilt
// on their graph and takes the provisional net's parameters (initialised or read) as they are. The
// trainer and the loaders set the positions before an optimizer or a gradient reducer holds the net.
MeshGraph provisional_sphere_graph(const GnnModelConfig& c) {
  const int N = c.net.ny * c.net.nx;
  std::vector<double> lat(static_cast<std::size_t>(N)), lon(lat.size());
  const double golden = 180.0 * (3.0 - std::sqrt(5.0));  // the golden angle in degrees
  for (int p = 0; p < N; ++p) {
    lat[static_cast<std::size_t>(p)] = std::asin(1.0 - 2.0 * (p + 0.5) / N) * 180.0 / 3.14159265358979323846;
    lon[static_cast<std::size_t>(p)] = std::remainder(golden * p, 360.0);
  }
  return build_sphere_mesh_graph(lat, lon, 0);  // the icosahedron alone: the smallest net until the positions come
}

std::unique_ptr<GnnNet<float>> make_net(const GnnModelConfig& c, int capacity, nn::Precision precision) {
  if (c.icosahedral)
    return std::make_unique<GnnNet<float>>(c.net, provisional_sphere_graph(c), capacity, precision);
  if (c.net.ny < 6 || c.net.nx < 6)
    throw Error(strf("gnn: the data's grid is %d x %d; the grid's mesh (gnn_mesh grid) needs 6 x 6 or more: "
                     "gnn_mesh icosahedral builds the mesh from the points' latitudes and longitudes "
                     "(global, reduced and unstructured grids)",
                     c.net.ny, c.net.nx),
                ExitCode::bad_input);
  return std::make_unique<GnnNet<float>>(c.net, capacity, precision);
}

}  // namespace

GnnModel::GnnModel(const GnnModelConfig& c, int capacity, nn::Precision precision)
    : c_(c), precision_(precision), net_(make_net(c, capacity, precision)) {
  const int N = c.net.ny * c.net.nx, S = c.states;
  if (c.net.d_in != 2 * c.states + c.forcings + c.statics || c.net.d_out != (c.day_before >= 0 ? 2 * S : S) ||
      (c.day_before >= 0 && c.day_before + S > c.forcings) ||
      (c.day_tendency >= 0 && (c.day_before < 0 || c.day_tendency + S > c.forcings)))
    throw Error("internal: gnn input/output widths do not match the variable counts");
  const int bw = c.boundary_width;
  mask_ = View1<float>("gnn_mask", static_cast<std::size_t>(N));
  auto h = Kokkos::create_mirror_view(mask_);
  for (int p = 0; p < N; ++p) {
    const int i = p % c.net.nx, j = p / c.net.nx;
    const bool inside = i >= bw && j >= bw && i < c.net.nx - bw && j < c.net.ny - bw;
    h(static_cast<std::size_t>(p)) = inside ? 1.0f : 0.0f;
    interior_ += inside ? 1 : 0;
  }
  if (interior_ == 0)
    throw Error(strf("gnn: boundary_width %d leaves no interior point of the %d x %d grid%s", bw, c.net.ny,
                     c.net.nx,
                     c.net.ny < 2 * bw + 1 ? " (boundary_width 0 for a global or unstructured grid)" : ""),
                ExitCode::bad_input);
  Kokkos::deep_copy(mask_, h);
  score_ = View1<float>("gnn_point_weights", static_cast<std::size_t>(N));
  Kokkos::deep_copy(score_, mask_);
  if (c_.variable_weights.empty()) c_.variable_weights.assign(static_cast<std::size_t>(S), 1.0);  // unweighted
  if (static_cast<int>(c_.variable_weights.size()) != S)
    throw Error(strf("gnn: %zu variable weights for %d state variables", c_.variable_weights.size(), S),
                ExitCode::bad_input);
  weights_ = View1<float>("gnn_variable_weights", static_cast<std::size_t>(S));
  auto hw = Kokkos::create_mirror_view(weights_);
  for (int v = 0; v < S; ++v)
    hw(static_cast<std::size_t>(v)) = static_cast<float>(c_.variable_weights[static_cast<std::size_t>(v)]);
  Kokkos::deep_copy(weights_, hw);
  const auto rows = static_cast<std::size_t>(capacity) * static_cast<std::size_t>(N);
  x_buf_ = View1<float>("gnn_x", rows * static_cast<std::size_t>(c.net.d_in));
  target_buf_ = View1<float>("gnn_target", rows * static_cast<std::size_t>(S));
  x_ = Tensor<float>(x_buf_.data(), Shape{static_cast<std::int64_t>(rows), c.net.d_in});
  if (rolls_out()) {  // the rollout's states, their gradients and every step's inputs (no allocation in the step)
    const auto A = static_cast<std::size_t>(std::max(c.ar_steps, 1));
    train_states_ = View1<float>("gnn_roll_states", (A + 2) * rows * static_cast<std::size_t>(S));
    train_grads_ = View1<float>("gnn_roll_grads", (A + 2) * rows * static_cast<std::size_t>(S));
    train_x_ = View1<float>("gnn_roll_x", A * rows * static_cast<std::size_t>(c.net.d_in));
  }
  target_ = Tensor<float>(target_buf_.data(), Shape{static_cast<std::int64_t>(rows), S});
  if (c.day_before >= 0) {
    blended_buf_ = View1<float>("gnn_blended", rows * static_cast<std::size_t>(S));
    blended_ = Tensor<float>(blended_buf_.data(), Shape{static_cast<std::int64_t>(rows), S});
  }
  set_normalisation(std::vector<double>(static_cast<std::size_t>(c.net.d_in), 0.0),
                    std::vector<double>(static_cast<std::size_t>(c.net.d_in), 1.0),
                    std::vector<double>(static_cast<std::size_t>(S), 0.0),
                    std::vector<double>(static_cast<std::size_t>(S), 1.0));
}

std::string GnnModel::config_string() const {
  const auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
    return out.empty() ? std::string("none") : out;
  };
  std::string weights;
  for (const double w : c_.variable_weights) weights += (weights.empty() ? "" : ",") + real_text(w);
  std::string s = strf(
      "gnn_latent=%d gnn_layers=%d boundary_width=%d grid_ny=%d grid_nx=%d states=%d forcings=%d statics=%d "
      "state_names=%s forcing_names=%s static_names=%s gnn_variable_weights=%s gnn_inputs=tendency",
      c_.net.latent, c_.net.layers, c_.boundary_width, c_.net.ny, c_.net.nx, c_.states, c_.forcings, c_.statics,
      join(c_.state_names).c_str(), join(c_.forcing_names).c_str(), join(c_.static_names).c_str(), weights.c_str());
  // Every key of the family's schema is stored (test_registry); a file written before these keys
  // existed reads them as their defaults.
  s += " derived_forcings=" + join(c_.derived_forcings) + " derived_statics=" + join(c_.derived_statics);
  s += std::string(" gnn_edge_distances=") + (c_.sphere_edges ? "sphere" : "grid");
  s += std::string(" gnn_mesh=") + (c_.icosahedral ? "icosahedral" : "grid");
  s += " gnn_mesh_refinements=" + std::to_string(c_.mesh_refinements);
  s += std::string(" gnn_point_weights=") + (c_.latitude_weights ? "latitude" : "uniform");
  s += std::string(" missing_data=") + (c_.masked ? "mask" : "error");
  s += " ar_steps_schedule=" + rollout_schedule_text(c_.ar_schedule);
  s += std::string(" gnn_recompute=") + (c_.net.recompute ? "true" : "false");
  s += std::string(" gnn_output=") + (c_.day_tendency >= 0 ? "day_before_anomaly"
                                      : c_.day_before >= 0 ? "day_before_blend"
                                                           : "increment");
  return s;
}

const Tensor<float>& GnnModel::inputs(const Batch& b) {
  const Tensor<float> state = b.get("state");
  const int A = static_cast<int>(b.get("targets").shape().dim[2]);
  const float* forcing = c_.forcings ? b.get("forcing").data() : nullptr;
  const float* statics = c_.statics ? b.get("static").data() : nullptr;
  gnn_kernels::build_inputs(x_.matrix(), state.data(), forcing, statics, in_mean_, in_inv_std_, b.n,
                            c_.net.ny * c_.net.nx, c_.states, c_.forcings, c_.statics, A);
  return x_;
}

const Tensor<float>& GnnModel::increments(const Batch& b) {
  const Tensor<float> targets = b.get("targets");
  gnn_kernels::build_increments(target_.matrix(), b.get("state").data(), targets.data(), diff_mean_, diff_std_, b.n,
                                c_.net.ny * c_.net.nx, c_.states, static_cast<int>(targets.shape().dim[2]));
  return target_;
}

double GnnModel::loss_and_grad(const Batch& b, const Tensor<float>& out, bool grad, double normaliser) {
  const int N = c_.net.ny * c_.net.nx, S = c_.states;
  const double w = 1.0 / (static_cast<double>(interior_) * S);  // the per-sample mean over points and variables
  return gnn_kernels::masked_squared_error(out.matrix(), increments(b).matrix(), score_, weights_,
                                           net_->output_grad().matrix(), grad, w, normaliser, b.n, N, S);
}

double GnnModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  // The epoch's stage of ar_steps_schedule (Note [rollout curriculum]); without one, every target.
  const int steps = rollout_steps_at(c_.ar_schedule, b.epoch, c_.ar_steps);
  if (steps > 1 || c_.day_before >= 0) return rollout_loss(b, steps, true, normaliser);
  const Tensor<float>& x = inputs(b);
  const Tensor<float>& y = net_->forward(x, b.n);
  const double sum = loss_and_grad(b, y, true, normaliser);
  net_->backward(x, b.n);
  return sum;
}

double GnnModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  if (rolls_out()) return rollout_loss(b, std::max(c_.ar_steps, 1), false, 1.0);
  return loss_and_grad(b, net_->forward(inputs(b), b.n), false, 1.0);
}

std::vector<MetricSpec> GnnModel::metrics(const EvalOptions& o) const {
  (void)o;
  std::vector<MetricSpec> m{loss_metric()};
  const auto name = [&](int s) {
    return s < static_cast<int>(c_.state_names.size()) ? c_.state_names[static_cast<std::size_t>(s)]
                                                       : "s" + std::to_string(s);
  };
  for (int s = 0; s < c_.states; ++s) m.push_back({"rmse_" + name(s), "", 6, double(interior_), true});
  for (int s = 0; s < c_.states; ++s) m.push_back({"persistence_rmse_" + name(s), "", 6, double(interior_), true});
  return m;
}

void GnnModel::evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) {
  (void)o;
  if (b.n == 0) return;
  // The loss is the rollout's over every target when ar_steps > 1 (whatever the schedule's stage);
  // the RMSEs are of one step.
  const double rollout = c_.ar_steps > 1 ? rollout_loss(b, c_.ar_steps, false, 1.0) : 0.0;
  const Tensor<float>& y = as_increments(net_->forward(inputs(b), b.n), b.get("state").data(),
                                         c_.forcings ? b.get("forcing").data() : nullptr,
                                         static_cast<int>(b.get("targets").shape().dim[2]), b.n);
  const double one_step = loss_and_grad(b, y, false, 1.0);
  sums[0] += c_.ar_steps > 1 ? rollout : one_step;
  for (int s = 0; s < c_.states; ++s)
    gnn_kernels::add_rmse_sums(y.matrix(), target_.matrix(), score_, diff_mean_, diff_std_, b.n,
                               c_.net.ny * c_.net.nx, s, sums[static_cast<std::size_t>(1 + s)],
                               sums[static_cast<std::size_t>(1 + c_.states + s)]);
}

const Tensor<float>& GnnModel::as_increments(const Tensor<float>& out, const float* state, const float* forcing,
                                             int A, int n) {
  if (c_.day_before < 0) return out;
  gnn_kernels::blend_increments(blended_.matrix(), out.matrix(), state, forcing, diff_std_, c_.day_before,
                                c_.day_tendency, n, c_.net.ny * c_.net.nx, c_.states, c_.forcings, A);
  return blended_;
}

std::vector<NamedShape> GnnModel::predict_inputs() const {
  const std::int64_t N = static_cast<std::int64_t>(c_.net.ny) * c_.net.nx;
  std::vector<NamedShape> in = {{"state", {c_.states, 2, N}}};
  if (c_.forcings) in.push_back({"forcing", {c_.forcings, 1, N}});
  if (c_.statics) in.push_back({"static", {c_.statics, N}});
  return in;
}

std::vector<NamedShape> GnnModel::predict_outputs(const PredictOptions& o) const {
  if (!output_wanted(o, "forecast")) return {};
  return {{"forecast", {c_.states, static_cast<std::int64_t>(c_.net.ny) * c_.net.nx}}};
}

Predictions GnnModel::predict(const Batch& b, const PredictOptions& o) {
  const int N = c_.net.ny * c_.net.nx, S = c_.states, F = c_.forcings, K = c_.statics, n = b.n;
  if (!output_wanted(o, "forecast")) return {};
  PredictOutput y{"forecast", {n, S, N}, View1<float>("gnn_forecast", static_cast<std::size_t>(n) * S * N)};
  const float* state = b.get("state").data();
  const float* forcing = F ? b.get("forcing").data() : nullptr;
  const float* statics = K ? b.get("static").data() : nullptr;
  const int chunk = std::max(1, std::min(o.chunk, net_->capacity()));
  for (int first = 0; first < n; first += chunk) {
    Heartbeat::beat_current("predicting a batch", std::string());  // Note [the tools' guard]
    const int rows = std::min(chunk, n - first);
    gnn_kernels::build_inputs(x_.matrix(), state + static_cast<std::size_t>(first) * S * 2 * N,
                              forcing ? forcing + static_cast<std::size_t>(first) * F * N : nullptr,
                              statics ? statics + static_cast<std::size_t>(first) * K * N : nullptr, in_mean_,
                              in_inv_std_, rows, N, S, F, K, 1);
    const Tensor<float>& out = as_increments(net_->forward(x_, rows),
                                             state + static_cast<std::size_t>(first) * S * 2 * N,
                                             forcing ? forcing + static_cast<std::size_t>(first) * F * N : nullptr,
                                             1, rows);
    gnn_kernels::forecast_from_increments(y.values, state, out.matrix(), diff_mean_, diff_std_, first, rows, N, S);
  }
  return {y};
}

}  // namespace hpct
