// The smart family's registry entry: its deck keys, building from the data's fields, and its stored
// configuration (see models/registry.hpp and smart_model.hpp).
#include "core/error.hpp"
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
  s.add_int("smart_freqs", 64, 1, 1024, "smart: learnable Fourier frequencies per relative feature");
  s.add_real("smart_dropout", 0.1, 0.0, 0.9, "smart: dropout in the feed-forward of every attention layer");
  s.add_real("smart_label_smoothing", 0.1, 0.0, 0.9, "smart: label smoothing of the next-token cross-entropy");
  s.add_int("smart_time_span", 6, 1, 17, "smart: temporal edges reach this many tokens (0.5 s each) back");
  s.add_int("smart_map_neighbours", 16, 1, 4096, "smart: map segments per map -> agent and map -> map node");
  s.add_int("smart_agent_neighbours", 16, 1, 4096, "smart: neighbours per agent <-> agent node (within 60 m)");
}

void declare_config(deck::Schema& s) {
  s.add_int("smart_max_agents", 1, 1, 1 << 20, "the most agents one scene of the training data held");
  s.add_int("smart_max_segments", 1, 1, 1 << 24, "the most map segments one scene of the training data held");
}

SmartConfig config_from(const deck::Deck& d) {
  SmartConfig c;
  c.hidden = static_cast<int>(d.get_int("smart_hidden"));
  c.heads = static_cast<int>(d.get_int("smart_heads"));
  c.map_layers = static_cast<int>(d.get_int("smart_map_layers"));
  c.agent_layers = static_cast<int>(d.get_int("smart_agent_layers"));
  c.vocab = static_cast<int>(d.get_int("motion_vocab"));
  c.freqs = static_cast<int>(d.get_int("smart_freqs"));
  c.dropout = d.get_real("smart_dropout");
  c.label_smoothing = d.get_real("smart_label_smoothing");
  c.limits.time_span = static_cast<int>(d.get_int("smart_time_span"));
  c.limits.map_neighbours = static_cast<int>(d.get_int("smart_map_neighbours"));
  c.limits.agent_neighbours = static_cast<int>(d.get_int("smart_agent_neighbours"));
  return c;
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
  return std::make_unique<SmartModel>(c, ctx.capacity);
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  SmartConfig c = config_from(config);
  c.limits.max_agents = static_cast<int>(config.get_int("smart_max_agents"));
  c.limits.max_segments = static_cast<int>(config.get_int("smart_max_segments"));
  return std::make_unique<SmartModel>(c, capacity);
}

}  // namespace

int smart_generate_main(int argc, char** argv);  // apps/trajgen: models/smart/smart_generate.cpp
int smart_evaluate_main(int argc, char** argv);  // apps/smart_eval: models/smart/smart_evaluate.cpp

ModelFamily smart_family() {
  ModelFamily f;
  f.name = "smart";
  f.summary = "SMART motion transformer: next motion token over scene graphs (apps/trajgen scenes)";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  f.generate = smart_generate_main;
  f.evaluate = smart_evaluate_main;
  return f;
}

}  // namespace hpct::smart
