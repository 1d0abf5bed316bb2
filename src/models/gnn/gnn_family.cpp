// The gnn family's registry entry: its deck keys, how it is built from the netcdf source's fields,
// and its stored configuration (see models/registry.hpp).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "models/gnn/gnn_model.hpp"
#include "models/registry.hpp"

namespace hpct {

namespace {

void declare(deck::Schema& s) {
  s.section("model (gnn)");
  s.add_int("gnn_latent", 256, 1, 1 << 16, "gnn: width of every node and edge representation");
  s.add_int("gnn_layers", 12, 1, 1000, "gnn: interaction-network layers on the mesh (processor)");
  s.add_bool("gnn_recompute", false,
             "gnn: recompute the interaction nets' activations in backward (memory: one net's instead of every "
             "net's; one more encoder and processor forward per step; the same gradients, bit for bit)");
  s.add_string("gnn_variable_weights", "",
               "gnn: comma-separated loss weight per state variable, in state_variables order (empty: 1 each)");
  s.add_choice("gnn_edge_distances", "grid", {"grid", "sphere"},
               "gnn: edge features in grid-index units (grid) or in km on the sphere between the points' "
               "latitudes and longitudes (sphere: the data's y and x coordinates in degrees)");
  s.add_choice("gnn_mesh", "grid", {"grid", "icosahedral"},
               "gnn: the mesh over the grid's rows and columns (grid: regional grids) or a refined icosahedron "
               "over the points' latitudes and longitudes (icosahedral: global, reduced Gaussian and unstructured "
               "grids; edge features on the sphere)");
  s.add_int("gnn_mesh_refinements", 5, 0, 9,
            "gnn: gnn_mesh icosahedral's refinements of the icosahedron (finest edge about 7054 / 2^r km: 5: 220 "
            "km, "
            "6: 110 km)");
  s.add_choice("gnn_point_weights", "uniform", {"uniform", "latitude"},
               "gnn: each point's weight in the loss and the scores: uniform, or cos(latitude) (latitude: the cell "
               "area of a regular latitude-longitude grid; WeatherBench2's latitude-weighted RMSE)");
  s.add_int("boundary_width", 2, 0, 1 << 16,
            "gnn: grid points along each edge of the region forced by the true state (left out of the loss)");
  s.add_string("ar_steps_schedule", "",
               "gnn: rollout curriculum, comma-separated EPOCH:STEPS stages (1:1, 5:6, 9:24: epochs 1-4 train "
               "one step, 5-8 six-step rollouts, 9 on 24); every stage within ar_steps, the samples' targets "
               "(empty: every epoch ar_steps)");
  s.add_choice("gnn_output", "increment", {"increment", "day_before_blend", "day_before_anomaly"},
               "gnn: the next state from the network's outputs: increment (the state plus the predicted change), "
               "day_before_blend (also a gate per state variable that moves it toward the state a day before; "
               "needs derived_forcings state_day_before) or day_before_anomaly (the state a day before plus the "
               "gated departure from it; needs state_day_before and tendency_day_before; docs/gnn.md)");
}

void declare_config(deck::Schema& s) {
  s.add_int("grid_ny", 6, 1, 1 << 20, "grid rows (y) the graph was built for (1: one row of points)");
  s.add_int("grid_nx", 6, 1, 1 << 30, "grid columns (x)");
  s.add_int("states", 1, 1, 1 << 16, "state variables (predicted)");
  s.add_int("forcings", 0, 0, 1 << 16, "forcing variables");
  s.add_int("statics", 0, 0, 1 << 16, "static variables");
  s.add_string("state_names", "", "the state variables' names, comma-separated (metric names)");
  s.add_string("forcing_names", "none", "the forcing variables' names, comma-separated (none: no forcing)");
  s.add_string("static_names", "none", "the static variables' names, comma-separated (none: no static field)");
  // Files written before Note [tendency input] have no such key: their inputs were the two states.
  s.add_string("derived_forcings", "none", "the source's derived forcings (after the forcing variables)");
  s.add_string("derived_statics", "none", "the source's derived static inputs (after the static variables)");
  s.add_string("missing_data", "error", "mask: the data's field mask left points out of the loss");
  s.add_string("gnn_inputs", "states", "the network's state inputs: tendency (the change and the state at t)");
}

// A comma-separated list; "none" is the empty list (a stored configuration has no empty values).
std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  if (list == "none") return out;
  std::stringstream in(list);
  for (std::string s; std::getline(in, s, ',');) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

GnnModelConfig config_from(const deck::Deck& d, int ny, int nx, int S, int F, int K,
                           const std::vector<std::string>& names, const std::vector<std::string>& forcing_names,
                           const std::vector<std::string>& static_names) {
  GnnModelConfig c;
  c.net.ny = ny, c.net.nx = nx, c.net.d_in = 2 * S + F + K, c.net.d_out = S;
  c.net.latent = static_cast<int>(d.get_int("gnn_latent"));
  c.net.layers = static_cast<int>(d.get_int("gnn_layers"));
  c.net.recompute = d.get_bool("gnn_recompute");
  c.states = S, c.forcings = F, c.statics = K;
  c.boundary_width = static_cast<int>(d.get_int("boundary_width"));
  c.state_names = names;
  // Loss weights: one non-negative number per state variable, not all 0 (empty: 1 each).
  const std::vector<std::string> weights = split(d.get_string("gnn_variable_weights"));
  c.variable_weights.assign(static_cast<std::size_t>(S), 1.0);
  if (!weights.empty()) {
    if (static_cast<int>(weights.size()) != S)
      d.fail("gnn_variable_weights",
             std::to_string(weights.size()) + " weights for " + std::to_string(S) + " state variables");
    double total = 0;
    for (std::size_t v = 0; v < weights.size(); ++v) {
      char* end = nullptr;
      const double w = std::strtod(weights[v].c_str(), &end);
      if (end == weights[v].c_str() || *end != '\0' || !(w >= 0) || !std::isfinite(w))
        d.fail("gnn_variable_weights", "'" + weights[v] + "' is not a non-negative number");
      c.variable_weights[v] = w, total += w;
    }
    if (total <= 0) d.fail("gnn_variable_weights", "at least one weight must be positive");
  }
  c.forcing_names = forcing_names, c.static_names = static_names;
  c.derived_forcings = split(d.get_string("derived_forcings"));
  c.derived_statics = split(d.get_string("derived_statics"));
  c.icosahedral = d.get_string("gnn_mesh") == "icosahedral";
  c.mesh_refinements = static_cast<int>(d.get_int("gnn_mesh_refinements"));
  c.latitude_weights = d.get_string("gnn_point_weights") == "latitude";
  c.sphere_edges = c.icosahedral || d.get_string("gnn_edge_distances") == "sphere";
  c.masked = d.get_string("missing_data") == "mask";
  c.ar_schedule = parse_rollout_schedule(d, "ar_steps_schedule");
  const std::string output = d.get_string("gnn_output");
  if (output != "increment") {
    // The source's forcing channels: the file's, the derived ones, state_day_before (S),
    // tendency_day_before (S), lead_time.
    const auto has = [&](const char* name) {
      return std::find(c.derived_forcings.begin(), c.derived_forcings.end(), name) != c.derived_forcings.end();
    };
    if (!has("state_day_before"))
      d.fail("gnn_output", output + " needs the state a day before: add state_day_before to derived_forcings");
    const bool anomaly = output == "day_before_anomaly";
    if (anomaly && !has("tendency_day_before"))
      d.fail("gnn_output", output +
                               " needs the day before's change over each step: add tendency_day_before to "
                               "derived_forcings");
    const int tendency = has("tendency_day_before") ? S : 0;
    c.day_before = F - S - tendency - (has("lead_time") ? 1 : 0);
    if (anomaly) c.day_tendency = c.day_before + S;
    c.net.d_out = 2 * S;
  }
  if (static_cast<int>(names.size()) != S) {  // the data's names are unknown: s0, s1, ...
    c.state_names.clear();
    for (int s = 0; s < S; ++s) c.state_names.push_back("s" + std::to_string(s));
  }
  return c;
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const FieldSpec& state = ctx.field("state");
  const FieldSpec& grid = ctx.field("grid");
  ctx.field("targets");
  ctx.field("diff");
  int F = 0, K = 0;
  for (const FieldSpec& f : ctx.fields) {
    if (f.name == "forcing") F = static_cast<int>(f.row_shape.dim[0]);
    if (f.name == "static") K = static_cast<int>(f.row_shape.dim[0]);
  }
  const auto ny = static_cast<int>(grid.row_shape.dim[1]), nx = static_cast<int>(grid.row_shape.dim[2]);
  std::vector<std::string> names = split(ctx.deck.get_string("state_variables"));
  GnnModelConfig c = config_from(ctx.deck, ny, nx, static_cast<int>(state.row_shape.dim[0]), F, K, names,
                                 split(ctx.deck.get_string("forcing_variables")),
                                 split(ctx.deck.get_string("static_variables")));
  c.ar_steps = static_cast<int>(ctx.field("targets").row_shape.dim[1]);  // trains through the rollout
  // The run's epochs (an in-situ session's deck has none: its stages are not checked against them).
  const long long epochs = ctx.deck.schema().find("epochs") ? ctx.deck.get_int("epochs") : 0;
  check_rollout_schedule(ctx.deck, "ar_steps_schedule", c.ar_schedule, c.ar_steps, epochs);
  if (!c.ar_schedule.empty()) {
    std::string stages;
    for (const RolloutStage& st : c.ar_schedule)
      stages += strf("%s%d step%s from epoch %d", stages.empty() ? "" : ", ", st.steps, st.steps > 1 ? "s" : "",
                     st.first_epoch);
    Log::info("gnn: rollout curriculum (ar_steps_schedule): " + stages + "; validation through all " +
              std::to_string(c.ar_steps));
  }
  return std::make_unique<GnnModel>(c, ctx.capacity, ctx.precision);
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  if (config.get_string("gnn_inputs") != "tendency")
    throw Error(
        "a gnn trained on the states at t - 1 and t as inputs (written before the tendency input, "
        "docs/gnn.md): its weights do not fit this version's inputs; retrain it",
        ExitCode::bad_input);
  return std::make_unique<GnnModel>(
      config_from(config, static_cast<int>(config.get_int("grid_ny")), static_cast<int>(config.get_int("grid_nx")),
                  static_cast<int>(config.get_int("states")), static_cast<int>(config.get_int("forcings")),
                  static_cast<int>(config.get_int("statics")), split(config.get_string("state_names")),
                  split(config.get_string("forcing_names")), split(config.get_string("static_names"))),
      capacity, nn::Precision::fp32);
}

}  // namespace

int gnn_generate_main(int argc, char** argv);  // apps/wxgen: models/gnn/gnn_generate.cpp
int gnn_evaluate_main(int argc, char** argv);  // apps/wxeval: models/gnn/gnn_evaluate.cpp

ModelFamily gnn_family() {
  ModelFamily f;
  f.name = "gnn";
  f.summary =
      "regional weather GNN: encoder-processor-decoder message passing on a multi-scale mesh "
      "(data_format netcdf; docs/gnn.md)";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  f.generate = gnn_generate_main;
  f.evaluate = gnn_evaluate_main;
  return f;
}

}  // namespace hpct
