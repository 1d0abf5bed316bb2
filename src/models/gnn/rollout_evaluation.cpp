// Rollout evaluation of a trained gnn on a netcdf file (see rollout_evaluation.hpp).
#include "models/gnn/rollout_evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "data/grid_samples.hpp"
#include "data/source_registry.hpp"
#include "models/gnn/forecast_file.hpp"
#include "models/gnn/gnn_model.hpp"
#include "models/registry.hpp"

namespace hpct {

namespace {
std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}
}  // namespace

// A model that knows its points' positions (edges on the sphere, the icosahedral mesh, latitude
// weights) rolls out only on data whose points are where they were in training, in the same order:
// another grid of the same size, or the same points in another order (a store written with its
// longitudes shifted), would feed each point's data to another point's place in the graph.
void check_positions(const GnnModel& model, const Dataset& data, const std::vector<FieldSpec>& specs,
                     const std::string& data_file, const std::string& weights) {
  const ExtraDatasets stored = model.extra_datasets();
  const auto lat = stored.find("graph/latitude"), lon = stored.find("graph/longitude");
  if (lat == stored.end() || lon == stored.end() || data.rows() == 0) return;
  const HostFields one(specs, 1, std::vector<std::uint64_t>(specs.size(), 0));
  data.read_block(0, 1, one.buffers());
  check_point_positions(model, static_cast<const float*>(one.buffers()[3].values), data_file, weights);
}

void check_point_positions(const GnnModel& model, const float* grid, const std::string& data_file,
                           const std::string& weights) {
  const ExtraDatasets stored = model.extra_datasets();
  const auto lat = stored.find("graph/latitude"), lon = stored.find("graph/longitude");
  if (lat == stored.end() || lon == stored.end()) return;
  const std::size_t N = lat->second.size();
  for (std::size_t p = 0; p < N; ++p) {
    const double dlon = std::remainder(double(grid[p]) - lon->second[p], 360.0);
    if (std::fabs(double(grid[N + p]) - lat->second[p]) > 1e-3 || std::fabs(dlon) > 1e-3)
      throw Error(strf("%s: point %zu is at latitude %g, longitude %g; %s was trained with it at %g, %g (another "
                       "grid, or its points in another order)",
                       data_file.c_str(), p, double(grid[N + p]), double(grid[p]), weights.c_str(), lat->second[p],
                       lon->second[p]),
                  ExitCode::bad_input);
  }
}

std::shared_ptr<const Dataset> open_model_data(const GnnModelConfig& c, const std::string& data_file, int ar_steps,
                                               const std::string& weights, bool states_only, bool forecast_inputs) {
  deck::Schema schema;
  declare_data_source_keys(schema);
  if (forecast_inputs) GridSamples::declare_forecast_inputs_key(schema);
  GridSamples::declare_steps_option_key(schema);  // the file's errors name --lead-steps, not ar_steps
  std::string text = "data_format auto\nstate_variables " + joined(c.state_names) + "\nar_steps " +
                     std::to_string(ar_steps) + "\nsteps_option wxeval --lead-steps\n" +
                     (forecast_inputs ? "forecast_inputs true\n" : "");
  if (!states_only) {
    if (!c.forcing_names.empty()) text += "forcing_variables " + joined(c.forcing_names) + "\n";
    if (!c.static_names.empty()) text += "static_variables " + joined(c.static_names) + "\n";
    if (!c.derived_forcings.empty()) text += "derived_forcings " + joined(c.derived_forcings) + "\n";
    if (!c.derived_statics.empty()) text += "derived_statics " + joined(c.derived_statics) + "\n";
  }
  if (c.masked) text += "missing_data mask\n";
  std::shared_ptr<const Dataset> data = open_data_source(deck::Deck::parse(text, weights + " (its variables)",
                                                                           schema, {}),
                                                         data_file, "data_file");
  const FieldSpec grid = data->fields().at(3);
  if (grid.row_shape.dim[1] != c.net.ny || grid.row_shape.dim[2] != c.net.nx)
    throw Error(data_file + ": a " + std::to_string(grid.row_shape.dim[1]) + " x " +
                    std::to_string(grid.row_shape.dim[2]) + " grid; " + weights + " was trained on " +
                    std::to_string(c.net.ny) + " x " + std::to_string(c.net.nx),
                ExitCode::bad_input);
  return data;
}

ForecastGrid forecast_grid(const GridSamples& data, const std::vector<std::size_t>& init_indices,
                           const GnnModelConfig& c, int leads, const std::string& source) {
  const GridSamples::Layout& l = data.layout();
  ForecastGrid g;
  g.ny = l.ny, g.nx = l.nx, g.y = l.y, g.x = l.x, g.latlon = l.latlon, g.lat = l.lat, g.lon = l.lon;
  g.timed = !l.time_s.empty();
  g.step_s = data.step_seconds();
  for (const std::size_t t : init_indices)
    g.init_times.push_back(g.timed ? l.time_s.at(t) : static_cast<double>(t));
  g.leads = leads, g.variables = c.state_names, g.source = source;
  return g;
}

namespace {

// The first sample of each rank's block of held-out samples [first, first + held_out), and its end.
std::uint64_t block_start(std::uint64_t first, std::uint64_t held_out, int rank, int ranks) {
  return first + held_out * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
}

}  // namespace

RolloutSums gnn_rollout_sums(const std::string& weights, const std::string& data_file, int lead_steps, double from,
                             int batch, const Comm& comm, nn::WeightsChoice choice,
                             const std::string& forecast_file, const std::string& source) {
  const int rank = comm.rank(), ranks = comm.size();
  const std::unique_ptr<Model> loaded = load_model(weights, batch, choice);
  auto* model = dynamic_cast<GnnModel*>(loaded.get());
  if (!model)
    throw Error(weights + ": a " + loaded->family() + " model; wxeval evaluates gnn models", ExitCode::bad_input);
  const GnnModelConfig& c = model->config();
  // The data opened as the model was trained on it, with lead_steps targets per sample.
  const std::shared_ptr<const Dataset> data = open_model_data(c, data_file, lead_steps, weights);
  const std::vector<FieldSpec> specs = data->fields();
  const std::uint64_t rows = data->rows();
  check_positions(*model, *data, specs, data_file, weights);
  const auto first = static_cast<std::uint64_t>(std::floor(from * static_cast<double>(rows)));
  const std::uint64_t held_out = rows - first;
  const std::uint64_t lo = block_start(first, held_out, rank, ranks),
                      hi = block_start(first, held_out, rank + 1, ranks);
  RolloutSums out;
  std::vector<double> climatology;  // [S N] mean state
  out.variables = c.state_names, out.leads = lead_steps, out.total_samples = held_out;
  out.ny = c.net.ny, out.nx = c.net.nx;
  const auto* grid_data = dynamic_cast<const GridSamples*>(data.get());
  if (grid_data && !grid_data->layout().time_s.empty()) out.step_s = grid_data->step_seconds();
  out.interior_points = model->interior_points();
  out.model.assign(static_cast<std::size_t>(lead_steps) * c.state_names.size(), 0.0);
  out.persistence = out.model;
  // Host buffers and their device copies, one batch at a time.
  const HostFields host(specs, static_cast<std::uint64_t>(batch), std::vector<std::uint64_t>(specs.size(), 0));
  const auto S = static_cast<std::size_t>(c.states), N = static_cast<std::size_t>(c.net.ny) * c.net.nx;
  const auto A = static_cast<std::size_t>(lead_steps);
  // Climatology: the mean state at t of the samples before `from` (all when there are none), per
  // variable and point; this rank's block, summed over ranks ([S N] sums, then the count).
  {
    const std::uint64_t c_end = first > 0 ? first : rows;
    const std::uint64_t c_lo = c_end * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
    const std::uint64_t c_hi = c_end * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(ranks);
    std::vector<double> sums(S * N + 1, 0.0);
    for (std::uint64_t at = c_lo; at < c_hi; at += static_cast<std::uint64_t>(batch)) {
      const std::uint64_t m = std::min<std::uint64_t>(static_cast<std::uint64_t>(batch), c_hi - at);
      data->read_block(at, m, host.buffers());
      const auto* state = static_cast<const float*>(host.buffers()[0].values);  // [m][S][2][N]
      for (std::uint64_t r = 0; r < m; ++r)
        for (std::size_t s = 0; s < S; ++s)
          for (std::size_t p = 0; p < N; ++p) sums[s * N + p] += state[((r * S + s) * 2 + 1) * N + p];
      sums[S * N] += static_cast<double>(m);
    }
    comm.allreduce_sum(sums.data(), sums.size());
    climatology.assign(sums.begin(), sums.end() - 1);
    for (double& v : climatology) v /= std::max(1.0, sums[S * N]);
  }
  const std::vector<float> inside = model->point_weights();  // the scores' weights (Note [point weights])
  out.climatology.assign(A * S, 0.0);
  std::vector<View1<float>> device;
  for (const FieldSpec& s : specs)
    device.emplace_back("wxeval_" + s.name, static_cast<std::size_t>(batch) * s.width());
  std::unique_ptr<ForecastFile> file;  // rank 0's
  if (!forecast_file.empty())
    comm.run_agreed([&] {
      if (!grid_data) throw Error(data_file + ": --forecast needs a gridded data file", ExitCode::bad_input);
      std::vector<std::size_t> inits;
      for (std::uint64_t row = first; row < rows; ++row) inits.push_back(grid_data->initial_time_index(row));
      if (rank == 0)
        file = std::make_unique<ForecastFile>(forecast_file,
                                              forecast_grid(*grid_data, inits, c, lead_steps, source));
    });
  int mask_field = -1;  // missing_data mask: the points the data never has get NaN in the forecast file
  for (std::size_t f = 0; f < specs.size(); ++f)
    if (specs[f].name == "mask") mask_field = static_cast<int>(f);
  // The ranks take their batches in rounds (the forecasts of a round go to rank 0 together).
  const auto B = static_cast<std::uint64_t>(batch);
  std::uint64_t rounds = 0;
  for (int r = 0; r < ranks; ++r)
    rounds = std::max(
        rounds, (block_start(first, held_out, r + 1, ranks) - block_start(first, held_out, r, ranks) + B - 1) / B);
  std::vector<float> forecasts;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t at = lo + round * B, n = at < hi ? std::min(B, hi - at) : 0;
    // Note [the tools' guard] (comm/run_guard.hpp): a beat per batch, wxeval's progress.
    Heartbeat::beat_current("rolling out a batch of initial times", data_file);
    comm.run_agreed([&] {
      forecasts.clear();
      if (n == 0) return;
      data->read_block(at, n, host.buffers());
      const long long bad = first_bad_value(specs, host.buffers(), n, nullptr, at);
      if (bad != kNoBadValue)  // which samples: a NaN there need not stop training on the others
        throw Error(describe_bad_value(*data, specs, bad,
                                       strf("the held-out initial times: the last %llu samples of the data, --from "
                                            "%g",
                                            static_cast<unsigned long long>(held_out), from)),
                    ExitCode::bad_input);
      Batch b;
      b.n = static_cast<int>(n);
      for (std::size_t f = 0; f < specs.size(); ++f) {
        const std::size_t count = n * specs[f].width();
        Kokkos::deep_copy(Kokkos::subview(device[f], std::make_pair(std::size_t(0), count)),
                          Kokkos::View<const float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                              static_cast<const float*>(host.buffers()[f].values), count));
        b.set(specs[f].name.c_str(),
              Tensor<float>(device[f].data(), specs[f].shape_of(static_cast<std::int64_t>(n))));
      }
      const bool plot = round == 0 && rank == 0;  // the first held-out sample: --fields
      const int keep = forecast_file.empty() ? (plot ? 1 : 0) : static_cast<int>(n);
      model->rollout_errors(b, out.model, out.persistence, keep > 0 ? &forecasts : nullptr, keep);
      if (plot) out.forecast.assign(forecasts.begin(), forecasts.begin() + static_cast<std::ptrdiff_t>(A * S * N));
      if (plot) {  // sample 0's targets, [lead][variable][N] like the forecast
        const auto* t = static_cast<const float*>(host.buffers()[1].values);
        for (std::size_t k = 0; k < A; ++k)
          for (std::size_t s = 0; s < S; ++s)
            for (std::size_t p = 0; p < N; ++p) out.truth.push_back(t[(s * A + k) * N + p]);
      }
      if (mask_field >= 0 && !forecasts.empty()) {
        const auto* valid = static_cast<const float*>(host.buffers()[static_cast<std::size_t>(mask_field)].values);
        for (std::size_t i = 0; i < forecasts.size(); ++i)
          if (valid[i % N] == 0.0f) forecasts[i] = std::numeric_limits<float>::quiet_NaN();
      }
      const auto* targets = static_cast<const float*>(host.buffers()[1].values);  // [n][S][A][N]
      for (std::uint64_t r = 0; r < n; ++r)
        for (std::size_t k = 0; k < A; ++k)
          for (std::size_t s = 0; s < S; ++s) {
            double e2 = 0;
            for (std::size_t p = 0; p < N; ++p) {
              const double e = targets[((r * S + s) * A + k) * N + p] - climatology[s * N + p];
              e2 += inside[p] * e * e;
            }
            out.climatology[k * S + s] += e2;
          }
      out.samples += n;
    });
    if (forecast_file.empty()) continue;
    const std::vector<float> all = comm.gather_to_root(forecasts);  // rank order: each rank's round
    comm.run_agreed([&] {
      if (!file) return;
      std::size_t offset = 0;
      for (int r = 0; r < ranks; ++r) {
        const std::uint64_t r_lo = block_start(first, held_out, r, ranks) + round * B;
        const std::uint64_t r_hi = block_start(first, held_out, r + 1, ranks);
        const std::uint64_t m = r_lo < r_hi ? std::min(B, r_hi - r_lo) : 0;
        file->write(r_lo - first, m, all.data() + offset);
        offset += m * A * S * N;
      }
    });
  }
  if (!forecast_file.empty())
    comm.run_agreed([&] {
      if (file) file->commit();
    });
  return out;
}

}  // namespace hpct
