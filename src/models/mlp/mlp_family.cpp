// The mlp family's registry entry: its deck keys, how to build it, and its stored configuration (see
// models/registry.hpp).
#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "models/mlp/mlp_model.hpp"
#include "models/registry.hpp"

namespace hpct {

namespace {

void declare(deck::Schema& s) {
  s.section("model (mlp)");
  s.add_int_list("hidden_sizes", "64,64", 1, 1 << 20, "widths of the hidden layers, e.g. 256,256");
  s.add_choice("activation", "relu", {"relu", "gelu", "silu", "tanh"}, "activation of the hidden layers");
  s.add_int("category_embedding", 0, 0, 1 << 16,
            "CSV/TSV: width of a learned embedding for each categorical column of more than onehot_max_categories "
            "categories (0: one-hot blocks; docs/tables.md)");
  // Note [mlp standardisation] in models/mlp/mlp_scaling.cpp: on by default, as the data users bring
  // is unscaled and a PyTorch user standardises it before training.
  s.add_bool("standardize_inputs", true,
             "standardise each numeric input column with the training file's mean and std (one-hot entries and "
             "embedded codes as they are; stored with the weights; docs/tables-mlp.md)");
  s.add_bool("standardize_targets", true,
             "loss mse: train on (label - mean) / std and map the outputs back (outputs and RMSE in the label's "
             "units, the loss in standardised ones)");
  s.add_choice("missing_numbers", "mean", {"mean", "error"},
               "CSV/TSV (and LibSVM with libsvm_absent missing): a missing cell of a numeric column reads as the "
               "column's mean (with standardize_inputs; the statistics skip it) or is an error naming file, line "
               "and column");
}

// "12,7" -> {12, 7} (the stored embedding_rows); "none" -> {}.
std::vector<int> parse_rows(const deck::Deck& config) {
  std::vector<int> rows;
  const std::string& text = config.get_string("embedding_rows");
  if (text == "none") return rows;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 9)
      config.fail("embedding_rows", "'" + item + "' is not a table's row count");
    rows.push_back(std::stoi(item));
  }
  return rows;
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const deck::Deck& deck = ctx.deck;
  MlpConfig cfg;
  // Any row shape is flattened: an image [C, H, W] is C x H x W inputs.
  const FieldSpec& inputs = ctx.field("inputs");
  const FieldSpec& targets = ctx.field("targets");
  if (inputs.dtype != DType::f32 || inputs.ragged)
    deck.fail("data_file",
              "the mlp reads a float32 inputs field of fixed shape; the data has " + inputs.describe());
  cfg.d_in = static_cast<int>(inputs.width());
  cfg.d_out = static_cast<int>(targets.width());
  for (long long h : deck.get_int_list("hidden_sizes")) cfg.hidden.push_back(static_cast<int>(h));
  cfg.activation = nn::activation_from_name(deck.get_string("activation"));
  // A table's embedded columns (Note [category embeddings] in gbdt/table_encoding.cpp).
  cfg.embedding_rows = ctx.category_rows;
  if (!cfg.embedding_rows.empty()) cfg.embedding_dim = static_cast<int>(deck.get_int("category_embedding"));
  const nn::LossKind loss = nn::loss_from_name(deck.get_string("loss"));
  if (targets.ragged || (targets.dtype != DType::f32 && loss != nn::LossKind::cross_entropy))
    deck.fail("loss", std::string(nn::loss_name(loss)) + " needs float32 targets of fixed shape; the data has " +
                          targets.describe());
  if (loss == nn::LossKind::cross_entropy) {
    if (cfg.d_out != 1)
      deck.fail("loss", "cross_entropy needs one target column holding the class index; the targets have " +
                            std::to_string(cfg.d_out));
    cfg.d_out = static_cast<int>(deck.get_int("num_classes"));
    // Class indices a source coded itself (a table's text labels: train/table_inputs.hpp): their
    // count is the number of classes (num_classes, if set, must equal it).
    if (targets.dtype != DType::f32 && targets.max_value < (1ll << 24)) {
      const int classes = static_cast<int>(targets.max_value) + 1;
      if (deck.is_set("num_classes") && cfg.d_out < classes)
        deck.fail("num_classes",
                  strf("the label column holds %d classes, more than num_classes %d", classes, cfg.d_out));
      // Class names define the classes: an output past them would have no name and no rows.
      if (deck.is_set("num_classes") && cfg.d_out > classes)
        deck.fail("num_classes", strf("the label column holds %d classes, fewer than num_classes %d (class names "
                                      "define the classes: leave num_classes out)",
                                      classes, cfg.d_out));
      cfg.d_out = classes;
      if (classes < 2)  // a file of one class (a filtered export): nothing to tell apart
        deck.fail("label_column", "the label column holds 1 class; cross_entropy needs 2 or more");
    }
    if (cfg.d_out < 2) deck.fail("num_classes", "cross_entropy needs num_classes >= 2");
  }
  MlpScalingConfig scaling;
  scaling.inputs = deck.get_bool("standardize_inputs");
  scaling.targets = deck.get_bool("standardize_targets") && loss == nn::LossKind::mse;
  if (ctx.unscaled_inputs.size() == static_cast<std::size_t>(cfg.d_in)) scaling.unscaled = ctx.unscaled_inputs;
  const double smoothing = loss == nn::LossKind::cross_entropy ? deck.get_real("label_smoothing") : 0.0;
  auto model = std::make_unique<MlpModel>(cfg, ctx.capacity, ctx.precision, loss, smoothing, scaling);
  // A table's empty cell is NaN; HDF5 inputs keep refusing NaN (there it is no missing cell).
  if (scaling.inputs && ctx.table_inputs && deck.get_string("missing_numbers") == "mean")
    model->allow_missing_inputs();
  return model;
}

// Note [stored configuration] in models/registry.hpp: the widths and the loss besides the deck keys.
void declare_config(deck::Schema& s) {
  s.add_int("d_in", 1, 1, 1 << 30, "values per row of the inputs");
  s.add_int("d_out", 1, 1, 1 << 30, "outputs of the last layer (cross_entropy: the classes)");
  s.add_choice("loss", "mse", {"mse", "cross_entropy", "bce"}, "the loss the model was trained with");
  s.add_string("embedding_rows", "none", "rows of each category embedding table (the last inputs are their codes)");
  // Note [stored label smoothing] in models/mlp/mlp_model.cpp.
  s.add_real("label_smoothing", 0.0, 0.0, 1.0,
             "cross_entropy: the label smoothing trained with, which predict's loss applies (0: none, and files "
             "written before it was stored)");
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  MlpConfig cfg;
  cfg.d_in = static_cast<int>(config.get_int("d_in"));
  cfg.d_out = static_cast<int>(config.get_int("d_out"));
  for (long long h : config.get_int_list("hidden_sizes")) cfg.hidden.push_back(static_cast<int>(h));
  cfg.activation = nn::activation_from_name(config.get_string("activation"));
  cfg.embedding_rows = parse_rows(config);
  if (!cfg.embedding_rows.empty()) {
    cfg.embedding_dim = static_cast<int>(config.get_int("category_embedding"));
    if (cfg.embedding_dim < 1 || cfg.embedding_rows.size() > static_cast<std::size_t>(cfg.d_in))
      config.fail("embedding_rows", "does not fit category_embedding and d_in");
  }
  const nn::LossKind loss = nn::loss_from_name(config.get_string("loss"));
  // Files written before Note [mlp standardisation] lack these keys and read them false
  // (keys_added_later below): the model as it trained, on the numbers as they are.
  MlpScalingConfig scaling;
  scaling.inputs = config.get_bool("standardize_inputs");
  scaling.targets = config.get_bool("standardize_targets") && loss == nn::LossKind::mse;
  auto model = std::make_unique<MlpModel>(cfg, capacity, nn::Precision::fp32, loss,
                                          config.get_real("label_smoothing"), scaling);
  if (scaling.inputs && config.get_string("missing_numbers") == "mean") model->allow_missing_inputs();
  return model;
}

// standardize_targets standardises the label of loss mse only (build, from_config): cross_entropy's
// class indices and bce's probabilities stay as they are, whatever the key says.
bool ignores_key(const deck::Deck& deck, const std::string& key) {
  return key == "standardize_targets" && deck.get_string("loss") != "mse";
}

}  // namespace

ModelFamily mlp_family() {
  ModelFamily f;
  f.name = "mlp";
  f.article = "an";
  f.summary = "multilayer perceptron: regression (mse), classification (cross_entropy), multi-label (bce)";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  f.legacy_config_keys = {{"hidden", "hidden_sizes"}};  // "d_in=4 hidden=64,64 d_out=1 activation=relu"
  // Note [keys added later] in models/registry.cpp: the runs before Note [mlp standardisation]
  // trained on the numbers as they are, not as today's default.
  f.keys_added_later = {{"standardize_inputs", "false"}, {"standardize_targets", "false"}};
  f.ignores_key = ignores_key;
  f.runs_in_situ = true;
  return f;
}

}  // namespace hpct
