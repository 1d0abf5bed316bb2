// The model registry: one entry per network family (its deck keys, how to build it from a deck,
// how to rebuild it from a weights file). The deck's `model` choices and `train --help-deck` come
// from it; adding a family is one new folder plus one line in registry.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "models/model.hpp"
#include "nn/precision.hpp"

namespace hpct {

struct ModelBuildContext {
  // The data's fields (names, dtypes, shapes): a family builds for what the data holds.
  ModelBuildContext(const deck::Deck& d, std::vector<FieldSpec> f, int cap, nn::Precision p)
      : deck(d), fields(std::move(f)), capacity(cap), precision(p) {}
  // Tabular data: inputs [d_in] and targets [d_out], float32.
  ModelBuildContext(const deck::Deck& d, int d_in, int d_out, int cap, nn::Precision p)
      : ModelBuildContext(d, supervised_fields(static_cast<std::uint64_t>(d_in), static_cast<std::uint64_t>(d_out)),
                          cap, p) {}
  const deck::Deck& deck;
  std::vector<FieldSpec> fields;
  int capacity = 0;  // the largest micro-batch
  nn::Precision precision = nn::Precision::fp32;

  // The field called `name`; a deck error (at data_file) when the data has none.
  const FieldSpec& field(const std::string& name) const;
};

struct ModelFamily {
  const char* name;     // the deck's `model` value
  const char* summary;  // one line for --help-deck
  void (*declare_keys)(deck::Schema& s);
  std::unique_ptr<Model> (*build)(const ModelBuildContext& ctx);
  // From the "config" attribute that a weights file stores (Model::config_string), for tools.
  std::unique_ptr<Model> (*from_config)(const std::string& config, int capacity);
};

const std::vector<ModelFamily>& model_families();
// Adds a family defined outside src/models (a test build's own family, a user's extension) before
// the deck schema is built: the one line such a program adds before calling train_main.
void register_model_family(const ModelFamily& family);
// The family named `name`, or nullptr.
const ModelFamily* find_model_family(const std::string& name);
// Declares the keys of every family (each family in its own section).
void declare_model_keys(deck::Schema& s);
// Builds the deck's model (ctx.deck's `model`).
std::unique_ptr<Model> make_model(const ModelBuildContext& ctx);
// Rebuilds the model a weights file describes and loads its parameters (and extra datasets).
std::unique_ptr<Model> load_model(const std::string& weights_file, int capacity);

}  // namespace hpct
