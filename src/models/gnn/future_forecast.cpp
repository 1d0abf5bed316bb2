// wxeval --init: one forecast from any initial time, past the data file's end (see future_forecast.hpp).
#include "models/gnn/future_forecast.hpp"

#include <cctype>
#include <cmath>
#include <limits>
#include <memory>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/grid_samples.hpp"
#include "models/gnn/forecast_file.hpp"
#include "models/gnn/gnn_model.hpp"
#include "models/gnn/rollout_evaluation.hpp"
#include "models/registry.hpp"

namespace hpct {

namespace {

// --init: last, a time index, or a time the file holds.
std::size_t initial_index(const GridSamples& data, const std::string& init, const std::string& data_file) {
  const std::vector<double> times = data.times();
  if (init == "last") return times.size() - 1;
  const bool digits = !init.empty() && init.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    const unsigned long long i = std::stoull(init);
    if (i >= times.size())
      throw Error(strf("--init %s: %s has times 0 .. %zu", init.c_str(), data_file.c_str(), times.size() - 1),
                  ExitCode::bad_input);
    return static_cast<std::size_t>(i);
  }
  if (data.layout().time_s.empty())
    throw Error("--init " + init + ": " + data_file + " has no time coordinate (give last or a time index)",
                ExitCode::bad_input);
  const double t = parse_iso_time(init, "--init");
  for (std::size_t i = 0; i < times.size(); ++i)
    if (std::fabs(times[i] - t) <= 0.5) return i;
  throw Error("--init " + init + ": " + data_file + " has no time " + iso_time(t) +
                  " (its times: " + iso_time(times.front()) + " .. " + iso_time(times.back()) + ")",
              ExitCode::bad_input);
}

}  // namespace

FutureForecast gnn_future_forecast(const std::string& weights, const std::string& data_file,
                                   const std::string& boundary_file, const std::string& init, int lead_steps,
                                   const Comm& comm, nn::WeightsChoice choice, const std::string& forecast_file,
                                   const std::string& source) {
  const std::unique_ptr<Model> loaded = load_model(weights, 1, choice);
  auto* model = dynamic_cast<GnnModel*>(loaded.get());
  if (!model)
    throw Error(weights + ": a " + loaded->family() + " model; wxeval evaluates gnn models", ExitCode::bad_input);
  const GnnModelConfig& c = model->config();
  // A limited-area model's boundary strip is forced by the truth, which ends with the file: past it
  // the strip comes from another forecast of the same grid (a global model's, as real LAMs take it).
  if (c.boundary_width > 0 && boundary_file.empty())
    throw Error(strf("%s: a limited-area model (boundary_width %d): a forecast from --init needs --boundary FILE, "
                     "the states on its grid at every valid time (e.g. a global model's forecast), for its "
                     "boundary "
                     "strip",
                     weights.c_str(), c.boundary_width),
                ExitCode::bad_input);
  if (c.boundary_width == 0 && !boundary_file.empty())
    throw Error(weights + ": a model without a boundary strip (boundary_width 0) takes no --boundary",
                ExitCode::bad_input);
  // The file as the forecast's inputs, no training sample needed (Note [future inputs]): the leads
  // are read_future's own, and so is the check that the file holds the times they need.
  const std::shared_ptr<const Dataset> opened = open_model_data(c, data_file, 1, weights, false, true);
  const auto* data = dynamic_cast<const GridSamples*>(opened.get());
  if (!data) throw Error(data_file + ": --init needs a gridded data file", ExitCode::bad_input);
  std::shared_ptr<const Dataset> boundary_data;
  const GridSamples* boundary = nullptr;
  if (!boundary_file.empty()) {
    boundary_data = open_model_data(c, boundary_file, 1, weights, true, true);
    boundary = dynamic_cast<const GridSamples*>(boundary_data.get());
    if (!boundary) throw Error(boundary_file + ": --boundary needs a gridded data file", ExitCode::bad_input);
    data->check_same_grid(*boundary);
  }
  const std::size_t init_index = initial_index(*data, init, data_file);
  FutureForecast out;
  const std::vector<double> times = data->times();
  out.variables = c.state_names, out.leads = lead_steps, out.init_index = init_index, out.times = times.size();
  out.init_time = times[init_index], out.last_time = times.back(), out.timed = !data->layout().time_s.empty();
  out.step_s = data->step_seconds();
  const auto S = static_cast<std::size_t>(c.states), N = static_cast<std::size_t>(c.net.ny) * c.net.nx;
  const auto A = static_cast<std::size_t>(lead_steps);
  out.model.assign(A * S, 0.0), out.persistence = out.model;
  std::vector<double> known(A, 0.0);
  // Rank 0 reads and rolls out (one initial time); the others learn its outcome and scores.
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    const std::vector<FieldSpec> specs = data->fields_with_leads(A);
    const HostFields host(specs, 1, std::vector<std::uint64_t>(specs.size(), 0));
    std::vector<float> truth;
    std::vector<char> holds;
    data->read_future(init_index, A, boundary, host.buffers(), truth, holds);
    check_point_positions(*model, static_cast<const float*>(host.buffers()[3].values), data_file, weights);
    std::vector<View1<float>> device;
    Batch b;
    b.n = 1;
    for (std::size_t f = 0; f < specs.size(); ++f) {
      device.emplace_back("wxeval_" + specs[f].name, specs[f].width());
      Kokkos::deep_copy(device[f], Kokkos::View<const float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                       static_cast<const float*>(host.buffers()[f].values), specs[f].width()));
      b.set(specs[f].name.c_str(), Tensor<float>(device[f].data(), specs[f].shape_of(1)));
    }
    std::vector<double> unused_model, unused_persistence;  // the rollout's sums against the targets: not truth
    std::vector<float> forecast;                           // [A][S][N]
    model->rollout_errors(b, unused_model, unused_persistence, &forecast, 1);
    // Scores where the file holds the valid time: interior RMSE per lead and variable.
    const std::vector<float> w = model->point_weights();
    const auto* state = static_cast<const float*>(host.buffers()[0].values);  // [S][2][N]
    for (std::size_t k = 0; k < A; ++k) {
      known[k] = holds[k] ? 1.0 : 0.0;
      if (!holds[k]) continue;
      for (std::size_t s = 0; s < S; ++s) {
        double m = 0, p = 0;
        for (std::size_t i = 0; i < N; ++i) {
          if (w[i] == 0.0f) continue;
          const double t = truth[(s * A + k) * N + i];
          const double em = forecast[(k * S + s) * N + i] - t, ep = state[(s * 2 + 1) * N + i] - t;
          m += w[i] * em * em, p += w[i] * ep * ep;
        }
        out.model[k * S + s] = std::sqrt(m / model->interior_points());
        out.persistence[k * S + s] = std::sqrt(p / model->interior_points());
      }
    }
    if (forecast_file.empty()) return;
    for (std::size_t f = 0; f < specs.size(); ++f)  // missing_data mask: points the data never has are NaN
      if (specs[f].name == "mask") {
        const auto* valid = static_cast<const float*>(host.buffers()[f].values);
        for (std::size_t i = 0; i < forecast.size(); ++i)
          if (valid[i % N] == 0.0f) forecast[i] = std::numeric_limits<float>::quiet_NaN();
      }
    ForecastFile file(forecast_file, forecast_grid(*data, {init_index}, c, lead_steps, source));
    file.write(0, 1, forecast.data());
    file.commit();
  });
  comm.allreduce_sum(out.model.data(), out.model.size());  // rank 0's, the others' zeros
  comm.allreduce_sum(out.persistence.data(), out.persistence.size());
  comm.allreduce_sum(known.data(), known.size());
  for (const double k : known) out.known.push_back(k > 0 ? 1 : 0);
  return out;
}

}  // namespace hpct
