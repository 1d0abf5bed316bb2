// Rollout evaluation of a trained gnn on a netcdf file (see rollout_evaluation.hpp).
#include "models/gnn/rollout_evaluation.hpp"

#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "data/source_registry.hpp"
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

RolloutSums gnn_rollout_sums(const std::string& weights, const std::string& data_file, int lead_steps, double from,
                             int batch, int rank, int ranks) {
  const std::unique_ptr<Model> loaded = load_model(weights, batch);
  auto* model = dynamic_cast<GnnModel*>(loaded.get());
  if (!model)
    throw Error(weights + ": a " + loaded->family() + " model; wxeval evaluates gnn models", ExitCode::bad_input);
  const GnnModelConfig& c = model->config();
  // The data opened as the model was trained on it, with lead_steps targets per sample.
  deck::Schema schema;
  declare_data_source_keys(schema);
  std::string text = "data_format netcdf\nstate_variables " + joined(c.state_names) + "\nar_steps " +
                     std::to_string(lead_steps) + "\n";
  if (!c.forcing_names.empty()) text += "forcing_variables " + joined(c.forcing_names) + "\n";
  if (!c.static_names.empty()) text += "static_variables " + joined(c.static_names) + "\n";
  const std::shared_ptr<const Dataset> data = open_data_source(deck::Deck::parse(text, weights + " (its variables)",
                                                                                 schema, {}),
                                                               data_file, "data_file");
  const std::vector<FieldSpec> specs = data->fields();
  const FieldSpec& grid = specs.at(3);
  if (grid.row_shape.dim[1] != c.net.ny || grid.row_shape.dim[2] != c.net.nx)
    throw Error(data_file + ": a " + std::to_string(grid.row_shape.dim[1]) + " x " +
                    std::to_string(grid.row_shape.dim[2]) + " grid; " + weights + " was trained on " +
                    std::to_string(c.net.ny) + " x " + std::to_string(c.net.nx),
                ExitCode::bad_input);
  const std::uint64_t rows = data->rows();
  const auto first = static_cast<std::uint64_t>(std::floor(from * static_cast<double>(rows)));
  const std::uint64_t held_out = rows - first;
  const std::uint64_t lo = first + held_out * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(ranks);
  const std::uint64_t hi = first +
                           held_out * static_cast<std::uint64_t>(rank + 1) / static_cast<std::uint64_t>(ranks);
  RolloutSums out;
  out.variables = c.state_names, out.leads = lead_steps, out.total_samples = held_out;
  out.interior_points = model->interior_points();
  out.model.assign(static_cast<std::size_t>(lead_steps) * c.state_names.size(), 0.0);
  out.persistence = out.model;
  // Host buffers and their device copies, one batch at a time.
  const HostFields host(specs, static_cast<std::uint64_t>(batch), std::vector<std::uint64_t>(specs.size(), 0));
  std::vector<View1<float>> device;
  for (const FieldSpec& s : specs)
    device.emplace_back("wxeval_" + s.name, static_cast<std::size_t>(batch) * s.width());
  for (std::uint64_t at = lo; at < hi; at += static_cast<std::uint64_t>(batch)) {
    const std::uint64_t n = std::min<std::uint64_t>(static_cast<std::uint64_t>(batch), hi - at);
    data->read_block(at, n, host.buffers());
    const long long bad = first_bad_value(specs, host.buffers(), n, nullptr, at);
    if (bad != kNoBadValue) throw Error(describe_bad_value(*data, specs, bad), ExitCode::bad_input);
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
    model->rollout_errors(b, out.model, out.persistence);
    out.samples += n;
  }
  return out;
}

}  // namespace hpct
