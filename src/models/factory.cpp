// Deck keys and construction of every network model family.
#include "core/error.hpp"
#include "models/diffusion_model.hpp"
#include "models/mlp_regressor.hpp"
#include "models/model.hpp"

namespace hpct {

void declare_model_keys(deck::Schema& s) {
  s.section("model (mlp)");
  s.add_int_list("hidden_sizes", "64,64", 1, 1 << 20, "widths of the hidden layers, e.g. 256,256");
  s.add_choice("activation", "relu", {"relu", "gelu", "silu", "tanh"}, "activation of the hidden layers");

  s.section("model (diffusion): n_context and n_fine are the widths of the inputs and targets datasets");
  s.add_int("time_embedding_dim", 32, 2, 1 << 16, "diffusion: size E of the sinusoidal timestep embedding (even)");
  s.add_int("diffusion_hidden", 256, 1, 1 << 20, "diffusion: hidden width H of the denoiser");
  s.add_int("diffusion_depth", 2, 0, 1024, "diffusion: H -> H SiLU layers after the embedding sum");
  s.add_int("diffusion_steps", 50, 1, 100000, "diffusion: number of noise levels T");
  s.add_choice("noise_schedule", "cosine", {"cosine", "linear"},
               "diffusion: cosine (Nichol & Dhariwal 2021, s = 0.008) or linear (Ho et al. 2020, scaled to T)");
  s.add_choice("diffusion_target", "eps", {"eps", "v"},
               "diffusion: the network predicts the noise eps (the seed's model) or v = sqrt(abar) eps - sqrt(1-abar) x_0");
}

std::unique_ptr<Model> make_model(const deck::Deck& deck, int d_in, int d_out, int capacity,
                                  std::size_t extra_grad_slots) {
  const std::string& family = deck.get_string("model");
  if (family == "mlp") {
    MlpConfig cfg;
    cfg.d_in = d_in;
    cfg.d_out = d_out;
    for (long long h : deck.get_int_list("hidden_sizes")) cfg.hidden.push_back(static_cast<int>(h));
    cfg.activation = nn::activation_from_name(deck.get_string("activation"));
    return std::make_unique<MlpRegressor>(cfg, capacity, extra_grad_slots);
  }
  if (family == "diffusion") {
    DiffusionConfig cfg;
    cfg.n_context = d_in;
    cfg.n_fine = d_out;
    cfg.time_dim = static_cast<int>(deck.get_int("time_embedding_dim"));
    if (cfg.time_dim % 2 != 0) deck.fail("time_embedding_dim", "must be even (sin and cos halves)");
    cfg.hidden = static_cast<int>(deck.get_int("diffusion_hidden"));
    cfg.depth = static_cast<int>(deck.get_int("diffusion_depth"));
    cfg.steps = static_cast<int>(deck.get_int("diffusion_steps"));
    cfg.schedule = deck.get_string("noise_schedule");
    cfg.target = deck.get_string("diffusion_target");
    return std::make_unique<DiffusionModel>(cfg, static_cast<std::uint64_t>(deck.get_int("seed")), capacity,
                                            extra_grad_slots);
  }
  deck.fail("model", "'" + family + "' is not a network model family");
}

}  // namespace hpct
