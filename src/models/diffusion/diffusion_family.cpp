// The diffusion family's registry entry: its deck keys, how to build it, and its stored configuration
// (see models/registry.hpp).
#include "core/error.hpp"
#include "core/log.hpp"
#include "io/hdf5.hpp"
#include "models/diffusion/diffusion_model.hpp"
#include "models/diffusion/grid_patches.hpp"
#include "models/registry.hpp"

namespace hpct {

namespace {

void declare(deck::Schema& s) {
  s.section("model (diffusion): n_context and n_fine are the widths of the inputs and targets datasets");
  s.add_int("time_embedding_dim", 32, 2, 1 << 16, "diffusion: size E of the sinusoidal timestep embedding (even)");
  s.add_int("diffusion_hidden", 256, 1, 1 << 20, "diffusion: hidden width H of the denoiser");
  s.add_int("diffusion_depth", 2, 0, 1024, "diffusion: H -> H SiLU layers after the embedding sum");
  s.add_int("diffusion_steps", 50, 1, 100000, "diffusion: number of noise levels T");
  s.add_choice("noise_schedule", "cosine", {"cosine", "linear"},
               "diffusion: cosine (Nichol & Dhariwal 2021, s = 0.008) or linear (Ho et al. 2020, scaled to T)");
  s.add_choice("diffusion_target", "eps", {"eps", "v"},
               "diffusion: the network predicts the noise eps (the seed's model) or v = sqrt(abar) eps - "
               "sqrt(1-abar) x_0");
  s.add_bool("diffusion_linear_skip", false,
             "diffusion: the network generates the departure from a least-squares linear map of the context, "
             "fitted to the training part before training (docs/diffusion.md)");
  s.add_bool("diffusion_statics_linear_only", false,
             "diffusion: the static blocks of diffgen --statics (the file's static_columns last context columns) "
             "reach only the linear skip, the network sees the rest; needs diffusion_linear_skip");
}

// Note [statics to the linear skip only]: the count of the training file's static context columns.
int static_columns_of(const deck::Deck& deck, int n_context) {
  const std::string key = "diffusion_statics_linear_only";
  if (!deck.get_bool("diffusion_linear_skip"))
    deck.fail(key, "gives the static blocks to the linear skip alone: set diffusion_linear_skip true as well");
  const std::string file = deck.get_string("data_file");
  long long k = 0;
  try {
    const h5::File f = h5::File::open_read(file);
    if (h5::has_attr(f, "/", kStaticColumnsAttribute)) k = h5::read_attr_int(f, "/", kStaticColumnsAttribute);
  } catch (const Error& e) {
    deck.fail(key, file + ": cannot read its attribute 'static_columns': " + e.what());
  }
  if (k < 1)
    deck.fail(key, file +
                       " has no static context columns (no attribute 'static_columns': cut it with diffgen "
                       "--grid ... --statics NAMES)");
  if (k >= n_context)
    deck.fail(key, strf("%s: attribute 'static_columns' %lld leaves none of its %d context columns to the network",
                        file.c_str(), k, n_context));
  return static_cast<int>(k);
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const deck::Deck& deck = ctx.deck;
  if (deck.get_string("loss") != "mse")
    deck.fail("loss", "the diffusion model trains on its own denoising (mse) loss; leave loss at mse");
  DiffusionConfig cfg;
  for (const char* name : {"inputs", "targets"})
    if (ctx.field(name).dtype != DType::f32 || ctx.field(name).ragged)
      deck.fail("data_file", std::string("the diffusion model reads float32 ") + name +
                                 " of fixed shape; the data has " + ctx.field(name).describe());
  cfg.n_context = static_cast<int>(ctx.field("inputs").width());
  cfg.n_fine = static_cast<int>(ctx.field("targets").width());
  cfg.time_dim = static_cast<int>(deck.get_int("time_embedding_dim"));
  if (cfg.time_dim % 2 != 0) deck.fail("time_embedding_dim", "must be even (sin and cos halves)");
  cfg.hidden = static_cast<int>(deck.get_int("diffusion_hidden"));
  cfg.depth = static_cast<int>(deck.get_int("diffusion_depth"));
  cfg.steps = static_cast<int>(deck.get_int("diffusion_steps"));
  cfg.schedule = deck.get_string("noise_schedule");
  cfg.target = deck.get_string("diffusion_target");
  cfg.linear_skip = deck.get_bool("diffusion_linear_skip");
  if (deck.get_bool("diffusion_statics_linear_only")) cfg.static_columns = static_columns_of(deck, cfg.n_context);
  return std::make_unique<DiffusionModel>(cfg, static_cast<std::uint64_t>(deck.get_int("seed")), ctx.capacity,
                                          ctx.precision);
}

// Note [stored configuration] in models/registry.hpp: the widths besides the deck keys.
void declare_config(deck::Schema& s) {
  s.add_int("n_context", 7, 1, 1 << 30, "values per row of the context (the inputs)");
  s.add_int("n_fine", 256, 1, 1 << 30, "values per row of the fine field (the targets)");
  s.add_bool("anomaly", false,
             "trained on diffgen --anomaly data (its file's `anomaly` attribute): fine values relative to "
             "context column 0, which predict adds back");
  s.add_int("static_columns", 0, 0, 1 << 30,
            "with diffusion_statics_linear_only: the last context columns (the static blocks) that only the "
            "linear skip sees");
}

DiffusionConfig config_from(const deck::Deck& d) {
  DiffusionConfig c;
  c.n_context = static_cast<int>(d.get_int("n_context"));
  c.n_fine = static_cast<int>(d.get_int("n_fine"));
  c.time_dim = static_cast<int>(d.get_int("time_embedding_dim"));
  if (c.time_dim % 2 != 0) d.fail("time_embedding_dim", "must be even (sin and cos halves)");
  c.hidden = static_cast<int>(d.get_int("diffusion_hidden"));
  c.depth = static_cast<int>(d.get_int("diffusion_depth"));
  c.steps = static_cast<int>(d.get_int("diffusion_steps"));
  c.schedule = d.get_string("noise_schedule");
  c.target = d.get_string("diffusion_target");
  c.linear_skip = d.get_bool("diffusion_linear_skip");
  c.anomaly = d.get_bool("anomaly");
  c.static_columns = d.get_bool("diffusion_statics_linear_only") ? static_cast<int>(d.get_int("static_columns"))
                                                                 : 0;
  if (c.static_columns > 0 && !c.linear_skip)
    d.fail("diffusion_statics_linear_only", "needs diffusion_linear_skip=true in the stored configuration");
  return c;
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  return std::make_unique<DiffusionModel>(config_from(config), 0, capacity);
}

}  // namespace

int diffusion_generate_main(int argc, char** argv);  // apps/diffgen: models/diffusion/diffusion_generate.cpp
int diffusion_evaluate_main(int argc, char** argv);  // apps/sample: models/diffusion/diffusion_evaluate.cpp

ModelFamily diffusion_family() {
  ModelFamily f;
  f.name = "diffusion";
  f.summary = "conditional diffusion downscaler (seed 000): coarse context -> fine field";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  f.generate = diffusion_generate_main;
  f.evaluate = diffusion_evaluate_main;
  // "n_context=7 n_fine=256 time_dim=32 hidden=256 depth=2 steps=50 schedule=cosine target=eps"
  f.legacy_config_keys = {{"time_dim", "time_embedding_dim"}, {"hidden", "diffusion_hidden"},
                          {"depth", "diffusion_depth"},       {"steps", "diffusion_steps"},
                          {"schedule", "noise_schedule"},     {"target", "diffusion_target"}};
  f.generates_ensembles = true;
  f.runs_in_situ = true;
  return f;
}

std::string DiffusionConfig::to_string() const {
  return strf(
      "n_context=%d n_fine=%d time_embedding_dim=%d diffusion_hidden=%d diffusion_depth=%d "
      "diffusion_steps=%d noise_schedule=%s diffusion_target=%s diffusion_linear_skip=%s anomaly=%s "
      "diffusion_statics_linear_only=%s static_columns=%d",
      n_context, n_fine, time_dim, hidden, depth, steps, schedule.c_str(), target.c_str(),
      linear_skip ? "true" : "false", anomaly ? "true" : "false", static_columns > 0 ? "true" : "false",
      static_columns);
}

DiffusionConfig DiffusionConfig::parse(const std::string& text) {
  return config_from(parse_config(diffusion_family(), text, "diffusion config"));
}

}  // namespace hpct
