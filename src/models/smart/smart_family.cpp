// The smart family's registry entry: its deck keys, building from the data's fields, and its stored
// configuration (see models/registry.hpp and smart_model.hpp).
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "models/registry.hpp"
#include "models/smart/smart_model.hpp"

namespace hpct::smart {

namespace {

void declare(deck::Schema& s) {
  s.section("model (smart: motion tokens over scene graphs, docs/transformer.md)");
  s.add_int("smart_hidden", 128, 8, 4096, "smart: width of every token embedding");
  s.add_int("smart_heads", 8, 1, 256, "smart: attention heads (smart_hidden must be a multiple)");
  s.add_int("smart_map_layers", 3, 0, 64, "smart: map -> map attention layers");
  s.add_int("smart_agent_layers", 6, 1, 64, "smart: agent layers (temporal, map -> agent, agent <-> agent each)");
  s.add_int("motion_vocab", 2048, 8, 1 << 16, "smart: motion tokens per agent type (a grid over 0.5 s motions)");
  s.add_string("motion_vocab_per_type", "all",
               "smart: each agent type's own motion tokens, e.g. vehicle:512,pedestrian:128,cyclist:256 (8 to "
               "motion_vocab each, the logits' width; a type not named, and `all`: motion_vocab)");
  s.add_choice("motion_vocab_fit", "grid", {"grid", "kdisks"},
               "smart: the motion tokens: a fixed grid, or k-disks centres fitted to the training scenes' motions");
  s.add_int("smart_freqs", 64, 1, 1024, "smart: learnable Fourier frequencies per relative feature");
  s.add_real("smart_dropout", 0.1, 0.0, 0.9, "smart: dropout in the feed-forward of every attention layer");
  s.add_real("smart_label_smoothing", 0.1, 0.0, 0.9, "smart: label smoothing of the next-token cross-entropy");
  s.add_int("smart_time_span", 6, 1, 17, "smart: temporal edges reach this many tokens (0.5 s each) back");
  s.add_int("smart_map_neighbours", 16, 1, 4096, "smart: map segments per map -> agent and map -> map node");
  s.add_int("smart_agent_neighbours", 16, 1, 4096, "smart: neighbours per agent <-> agent node (within 60 m)");
  s.add_real("smart_step", 0, 0, 10,
             "smart: seconds between the data's steps; a token is 0.5 s of them (0: the scene file's step_seconds, "
             "else 0.1)");
  s.add_real("smart_history", 0, 0, 3600,
             "smart: seconds observed, a multiple of 0.5 (0: the scene file's history_seconds, else 1.0)");
  s.add_real("smart_future", 0, 0, 3600,
             "smart: seconds predicted after the history, a multiple of 0.5 (0: the scene file's future_seconds, "
             "else the rest of agent_state)");
}

void declare_config(deck::Schema& s) {
  s.add_int("smart_max_agents", 1, 1, 1 << 20, "the most agents one scene of the training data held");
  s.add_int("smart_max_segments", 1, 1, 1 << 24, "the most map segments one scene of the training data held");
}

// motion_vocab_per_type: `all`, or type:count pairs (Note [tokens per type] in smart_forward.cpp).
std::array<int, kAgentTypes> type_vocab(const deck::Deck& d, int vocab) {
  const char* key = "motion_vocab_per_type";
  std::array<int, kAgentTypes> counts{};
  const std::string& value = d.get_string(key);
  if (value == "all") return counts;
  for (const std::string& item : deck::split_list(value)) {
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon);
    int t = 0;
    while (t < kAgentTypes && name != kAgentTypeNames[t]) ++t;
    if (colon == std::string::npos || t == kAgentTypes)
      d.fail(key, "expected type:count pairs of vehicle, pedestrian, cyclist (or `all`), got '" + item + "'");
    const std::string number = item.substr(colon + 1);
    char* end = nullptr;
    const long long n = std::strtoll(number.c_str(), &end, 10);
    if (number.empty() || *end != '\0' || n < 8 || n > vocab)
      d.fail(key, "'" + item + "': a type's tokens must be a whole number from 8 to motion_vocab (" +
                      std::to_string(vocab) + ")");
    if (counts[static_cast<std::size_t>(t)] != 0) d.fail(key, "'" + name + "' is given twice");
    counts[static_cast<std::size_t>(t)] = static_cast<int>(n);
  }
  return counts;
}

SmartConfig config_from(const deck::Deck& d) {
  SmartConfig c;
  c.hidden = static_cast<int>(d.get_int("smart_hidden"));
  c.heads = static_cast<int>(d.get_int("smart_heads"));
  c.map_layers = static_cast<int>(d.get_int("smart_map_layers"));
  c.agent_layers = static_cast<int>(d.get_int("smart_agent_layers"));
  c.vocab = static_cast<int>(d.get_int("motion_vocab"));
  c.type_vocab = type_vocab(d, c.vocab);
  c.fit_vocab = d.get_string("motion_vocab_fit") == "kdisks";
  c.freqs = static_cast<int>(d.get_int("smart_freqs"));
  c.dropout = d.get_real("smart_dropout");
  c.label_smoothing = d.get_real("smart_label_smoothing");
  c.limits.time_span = static_cast<int>(d.get_int("smart_time_span"));
  c.limits.map_neighbours = static_cast<int>(d.get_int("smart_map_neighbours"));
  c.limits.agent_neighbours = static_cast<int>(d.get_int("smart_agent_neighbours"));
  c.step = d.get_real("smart_step"), c.history = d.get_real("smart_history"), c.future = d.get_real("smart_future");
  return c;
}

// `seconds` / `unit` as a whole number (within 1e-6), else a deck error at `key`.
int whole(const deck::Deck& d, const char* key, double seconds, double unit, const char* what) {
  const double n = seconds / unit;
  if (!(n >= 1 - 1e-6) || std::abs(n - std::round(n)) > 1e-6 * std::max(1.0, n))
    d.fail(key, std::string(what) + " (" + std::to_string(seconds) + " s) must be a positive multiple of " +
                    std::to_string(unit) + " s");
  return static_cast<int>(std::lround(n));
}

// The token grid of smart_step, smart_history, smart_future (resolved: no zeros left).
void set_grid(SmartConfig& c, const deck::Deck& d) {
  TokenGrid& g = c.limits.grid;
  g.shift = whole(d, "smart_step", kTokenSeconds, c.step, "a token (0.5 s) over smart_step");
  g.history = whole(d, "smart_history", c.history, kTokenSeconds, "smart_history");
  g.tokens = g.history + whole(d, "smart_future", c.future, kTokenSeconds, "smart_future");
}

// Note [grid from the scene file]: smart_step, smart_history and smart_future left at 0 come from
// the scene file's attributes (trajgen and scenes_import write step_seconds, history_seconds,
// future_seconds), so a deck need not repeat the data's rate and horizon; files without them are
// trajgen's 10 Hz, 1 s + the rest.
void resolve_grid(SmartConfig& c, const deck::Deck& d, std::int64_t steps) {
  double step = 0.1, history = 1.0, future = 0;
  const std::string& file = d.get_string("data_file");
  // A run has opened its data already; a model built from fields alone (a test, a tool given the
  // fields' shapes) has no file to read, and takes trajgen's grid.
  if (std::ifstream(file).good()) {
    const h5::File f = h5::File::open_read(file);
    if (h5::has_attr(f, "/", "step_seconds")) step = h5::read_attr_double(f, "/", "step_seconds");
    if (h5::has_attr(f, "/", "history_seconds")) history = h5::read_attr_double(f, "/", "history_seconds");
    if (h5::has_attr(f, "/", "future_seconds")) future = h5::read_attr_double(f, "/", "future_seconds");
  }
  if (c.step == 0) c.step = step;
  if (c.history == 0) c.history = history;
  if (c.future == 0) c.future = future > 0 ? future : static_cast<double>(steps - 1) * c.step - c.history;
  set_grid(c, d);
  if (c.limits.grid.steps() > steps)
    d.fail("smart_future", "the grid needs " + std::to_string(c.limits.grid.steps()) + " steps of " +
                               std::to_string(c.step) + " s per agent; agent_state in " + file + " has " +
                               std::to_string(steps));
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const FieldSpec& types = ctx.field("agent_type");
  const FieldSpec& segs = ctx.field("map_type");
  for (const char* name : {"agent_state", "agent_type", "map_polyline", "map_type"})
    if (!ctx.field(name).ragged)
      ctx.deck.fail("data_file", std::string("smart reads trajgen scenes: '") + name +
                                     "' must be ragged; the data has " + ctx.field(name).describe());
  if (types.dtype != DType::i64 || segs.dtype != DType::i64)
    ctx.deck.fail("data_file", "smart reads int64 agent_type and map_type (apps/trajgen)");
  SmartConfig c = config_from(ctx.deck);
  // bf16/fp16: every layer computes in it (fp32 master weights, norms, softmax and loss in fp32).
  c.precision = ctx.precision;
  c.limits.max_agents = static_cast<int>(std::max<std::uint64_t>(types.max_row_elements, 1));
  c.limits.max_segments = static_cast<int>(std::max<std::uint64_t>(segs.max_row_elements, 1));
  c.seed = static_cast<std::uint64_t>(ctx.deck.get_int("seed"));
  const FieldSpec& st = ctx.field("agent_state");
  if (st.row_shape.rank != 2 || st.row_shape.dim[1] != 5)
    ctx.deck.fail("data_file", "smart reads agent_state [agents, steps, 5]; the data has " + st.describe());
  resolve_grid(c, ctx.deck, st.row_shape.dim[0]);
  return std::make_unique<SmartModel>(c, ctx.capacity);
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  SmartConfig c = config_from(config);
  c.limits.max_agents = static_cast<int>(config.get_int("smart_max_agents"));
  c.limits.max_segments = static_cast<int>(config.get_int("smart_max_segments"));
  // Weights written before the grid keys: trajgen's grid.
  if (c.step == 0) c.step = 0.1;
  if (c.history == 0) c.history = 1.0;
  if (c.future == 0) c.future = 8.0;
  set_grid(c, config);
  return std::make_unique<SmartModel>(c, capacity);
}

}  // namespace

int smart_generate_main(int argc, char** argv);  // apps/trajgen: models/smart/smart_generate.cpp
int smart_evaluate_main(int argc, char** argv);  // apps/smart_eval: models/smart/smart_evaluate.cpp
int smart_import_main(int argc, char** argv);    // apps/scenes_import: models/smart/smart_import.cpp

ModelFamily smart_family() {
  ModelFamily f;
  f.name = "smart";
  f.summary = "SMART motion transformer: next motion token over scene graphs (trajgen or scenes_import scenes)";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  f.generate = smart_generate_main;
  f.evaluate = smart_evaluate_main;
  f.import_data = smart_import_main;
  return f;
}

}  // namespace hpct::smart
