// Deck keys and construction of every network model family.
#include "core/error.hpp"
#include "models/mlp_regressor.hpp"
#include "models/model.hpp"

namespace hpct {

void declare_model_keys(deck::Schema& s) {
  s.section("model (mlp)");
  s.add_int_list("hidden_sizes", "64,64", 1, 1 << 20, "widths of the hidden layers, e.g. 256,256");
  s.add_choice("activation", "relu", {"relu", "gelu", "silu", "tanh"}, "activation of the hidden layers");
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
  deck.fail("model", "'" + family + "' is not a network model family");
}

}  // namespace hpct
