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
  const deck::Deck& deck;
  int d_in = 0, d_out = 0;  // widths of one row of the inputs and of the targets
  int capacity = 0;         // the largest micro-batch
  nn::Precision precision = nn::Precision::fp32;
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
// The family named `name`, or nullptr.
const ModelFamily* find_model_family(const std::string& name);
// Declares the keys of every family (each family in its own section).
void declare_model_keys(deck::Schema& s);
// Builds the deck's model (ctx.deck's `model`).
std::unique_ptr<Model> make_model(const ModelBuildContext& ctx);
// Rebuilds the model a weights file describes and loads its parameters (and extra datasets).
std::unique_ptr<Model> load_model(const std::string& weights_file, int capacity);

}  // namespace hpct
