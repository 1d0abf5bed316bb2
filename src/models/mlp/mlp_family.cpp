// The mlp family's registry entry: its deck keys and how to build it (see models/registry.hpp).
#include <sstream>

#include "core/error.hpp"
#include "models/mlp/mlp_model.hpp"
#include "models/registry.hpp"

namespace hpct {

namespace {

void declare(deck::Schema& s) {
  s.section("model (mlp)");
  s.add_int_list("hidden_sizes", "64,64", 1, 1 << 20, "widths of the hidden layers, e.g. 256,256");
  s.add_choice("activation", "relu", {"relu", "gelu", "silu", "tanh"}, "activation of the hidden layers");
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const deck::Deck& deck = ctx.deck;
  MlpConfig cfg;
  // Any row shape is flattened: an image [C, H, W] is C x H x W inputs.
  const FieldSpec& inputs = ctx.field("inputs");
  const FieldSpec& targets = ctx.field("targets");
  if (inputs.dtype != DType::f32 || inputs.ragged)
    deck.fail("data_file", "the mlp reads a float32 inputs field of fixed shape; the data has " + inputs.describe());
  cfg.d_in = static_cast<int>(inputs.width());
  cfg.d_out = static_cast<int>(targets.width());
  for (long long h : deck.get_int_list("hidden_sizes")) cfg.hidden.push_back(static_cast<int>(h));
  cfg.activation = nn::activation_from_name(deck.get_string("activation"));
  const nn::LossKind loss = nn::loss_from_name(deck.get_string("loss"));
  if (targets.ragged || (targets.dtype != DType::f32 && loss != nn::LossKind::cross_entropy))
    deck.fail("loss", std::string(nn::loss_name(loss)) + " needs float32 targets of fixed shape; the data has " + targets.describe());
  if (loss == nn::LossKind::cross_entropy) {
    if (cfg.d_out != 1)
      deck.fail("loss", "cross_entropy needs one target column holding the class index; the targets have " +
                            std::to_string(cfg.d_out));
    cfg.d_out = static_cast<int>(deck.get_int("num_classes"));
    if (cfg.d_out < 2) deck.fail("num_classes", "cross_entropy needs num_classes >= 2");
  }
  return std::make_unique<MlpModel>(cfg, ctx.capacity, ctx.precision, loss, deck.get_real("label_smoothing"));
}

std::unique_ptr<Model> from_config(const std::string& config, int capacity) {
  MlpConfig cfg;
  nn::LossKind loss = nn::LossKind::mse;
  std::istringstream in(config);
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    const std::string k = tok.substr(0, eq), v = eq == std::string::npos ? "" : tok.substr(eq + 1);
    if (k == "d_in") cfg.d_in = std::stoi(v);
    else if (k == "d_out") cfg.d_out = std::stoi(v);
    else if (k == "activation") cfg.activation = nn::activation_from_name(v);
    else if (k == "loss") loss = nn::loss_from_name(v);
    else if (k == "hidden") {
      std::istringstream hs(v);
      for (std::string h; std::getline(hs, h, ',');)
        if (!h.empty()) cfg.hidden.push_back(std::stoi(h));
    } else {
      throw Error("mlp config: unknown key '" + k + "' in '" + config + "'", ExitCode::bad_input);
    }
  }
  if (cfg.d_in < 1 || cfg.d_out < 1) throw Error("mlp config: '" + config + "' lacks d_in or d_out", ExitCode::bad_input);
  return std::make_unique<MlpModel>(cfg, capacity, nn::Precision::fp32, loss);
}

}  // namespace

ModelFamily mlp_family() {
  return {"mlp", "multilayer perceptron: regression (mse), classification (cross_entropy), multi-label (bce)",
          declare, build, from_config};
}

}  // namespace hpct
