// The model registry: one entry per network family (its deck keys, how to build it from a deck,
// how to rebuild it from the configuration a weights file stores). The deck's `model` choices,
// `train --help-deck`, the tools and the in-situ library come from it; adding a family is one new
// folder plus one line in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "models/model.hpp"
#include "nn/precision.hpp"
#include "nn/weights_io.hpp"

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
  // A table's categorical columns read as codes (Note [category embeddings] in gbdt/table_encoding.cpp):
  // the last category_rows.size() inputs, each a code below its entry. Empty: every input is a number.
  std::vector<int> category_rows;
  // A table's inputs that are no numbers (one-hot entries, embedded codes), 1 each (Note [mlp
  // standardisation]); empty: every input is a number.
  std::vector<char> unscaled_inputs;
  bool table_inputs = false;  // the inputs are a CSV/TSV table's (or an ensemble's rows): NaN is a missing cell
  // Sums host doubles over the training ranks in place (synchronised batch norm); empty: one rank.
  std::function<void(double* values, int count)> allreduce_sum;

  // The field called `name`; a deck error (at data_file) when the data has none.
  const FieldSpec& field(const std::string& name) const;
};

struct ModelFamily {
  const char* name = "";                            // the deck's `model` value
  const char* article = "a";                        // "a" or "an" before the name in messages ("an mlp model")
  const char* summary = "";                         // one line for --help-deck
  void (*declare_keys)(deck::Schema& s) = nullptr;  // its deck keys, in its own section
  std::unique_ptr<Model> (*build)(const ModelBuildContext& ctx) = nullptr;
  // Note [stored configuration]: a model's configuration (Model::config_string, the weights file's
  // "config" attribute) is one line of `key=value` settings parsed by config_schema(): the keys of
  // declare_keys plus those declare_config_keys adds (the widths the model was built for, its
  // loss...). So decks and weights files share one typed parser, and a key the family adds to its
  // deck is stored (test_registry checks that every key of the schema is).
  void (*declare_config_keys)(deck::Schema& s) = nullptr;
  // Rebuilds the model from its parsed configuration (fp32), for tools and inference.
  std::unique_ptr<Model> (*from_config)(const deck::Deck& config, int capacity) = nullptr;
  // Weights files written before Note [stored configuration] used other key names: old -> today's.
  std::vector<std::pair<std::string, std::string>> legacy_config_keys;
  // Note [keys added later] in registry.cpp: the family's keys whose value before they existed is
  // not their default, key -> that value (the mlp's standardize_inputs: `false`, the code before it
  // trained on the numbers as they are). A stored configuration or checkpoint deck without the key
  // ran as that value; train's resume and config_difference refuse to take it over with another.
  std::vector<std::pair<std::string, std::string>> keys_added_later;
  // Whether the model a deck (or stored configuration) describes ignores one of the family's keys
  // (the mlp's standardize_targets under a loss other than mse): such a key is no difference
  // between a checkpoint and what takes it over, so a resume never asks for its value from before.
  // nullptr: the family's models read every key.
  bool (*ignores_key)(const deck::Deck& deck, const std::string& key) = nullptr;
  // Its models generate ensembles (Model::generates_ensembles); here for messages that name the
  // families able to do something without building a model.
  bool generates_ensembles = false;
  // Its models read fixed-width float rows (inputs -> targets), the only data the in-situ library's
  // buffer holds; families of images, graphs or token scenes train from files only.
  bool runs_in_situ = false;
  // Note [family tools]: the family's command-line programs, each a whole main (its own usage,
  // messages and exit codes). `generate` writes the family's data set (apps/wxgen, trajgen, posegen,
  // diffgen), `evaluate` scores a trained model on held-out data (apps/wxeval, smart_eval, cape_eval,
  // sample). apps/ reach a family only through these (scripts/lint checks that apps include no
  // family header), so a family's data generator and evaluation live in its folder. nullptr: none.
  int (*generate)(int argc, char** argv) = nullptr;
  int (*evaluate)(int argc, char** argv) = nullptr;
  // `import_data` turns data as users hold it into the family's data set (apps/scenes_import).
  int (*import_data)(int argc, char** argv) = nullptr;
  // `predict` runs a trained model on data as users hold it where apps/predict's rows of the model's
  // inputs do not say it; its program is apps/<name>_predict, which apps/predict names for the
  // family's weights (apps/cape_predict: a support and query boxes, Note [cape predict]).
  int (*predict)(int argc, char** argv) = nullptr;
};

const std::vector<ModelFamily>& model_families();
// Adds a family defined outside src/models (a test build's own family, a user's extension) before
// the deck schema is built: the one line such a program adds before calling train_main.
void register_model_family(const ModelFamily& family);
// The family named `name`, or nullptr.
const ModelFamily* find_model_family(const std::string& name);
// Declares the keys of every family (each family in its own section).
void declare_model_keys(deck::Schema& s);
// Runs the named family's `generate` or `evaluate` program (Note [family tools]) on the command
// line and returns its exit code: the whole main of apps/wxgen, wxeval and the others.
enum class FamilyTool { generate, evaluate, import_data, predict };
int run_family_tool(const std::string& family, FamilyTool tool, int argc, char** argv);
// Builds the deck's model (ctx.deck's `model`).
std::unique_ptr<Model> make_model(const ModelBuildContext& ctx);

// The schema of a family's stored configuration (Note [stored configuration]).
deck::Schema config_schema(const ModelFamily& f);
// Parses a stored configuration (legacy key names too); errors name `origin` (e.g. "w.h5: config").
deck::Deck parse_config(const ModelFamily& f, const std::string& config, const std::string& origin);
// The configuration with today's key names, every key in schema order: two configurations of a
// family describe the same model exactly when their normalised forms are equal.
std::string normalised_config(const ModelFamily& f, const std::string& config);
// Note [keys added later]: "" when the model configured by `current` (a model's config_string)
// can take over a stored configuration, else every key that differs, in schema order ("key:
// 'stored' stored, 'current' now", joined by ", "). Keys the stored configuration lacks were added
// after it was written: not recorded, so the current value holds, as train's resume takes a deck
// key newer than its checkpoint; except the family's keys_added_later, which must have their value
// from before (the message then says what the stored run did and, in one sentence for all of them,
// which deck lines take it over as it ran: keys_added_later_refusal).
std::string config_difference(const ModelFamily& f, const std::string& stored, const std::string& current);
// For a deck taking over a checkpoint of family `f` whose deck or configuration lacks `key`: "" when
// the deck's value is the one the checkpoint's run had (the key is not among the family's
// keys_added_later, the deck has its value from before, `no` and `false` alike, or the model the
// deck describes ignores the key: ModelFamily::ignores_key), else why not and
// the deck line that resumes the run as it ran: "the checkpoint was written before this key existed,
// when the run trained as `key before`; set that line in the deck to resume it as it ran".
std::string key_added_later_refusal(const ModelFamily& f, const deck::Deck& deck, const std::string& key);
// The refusal for keys added later that a deck must set to take over a checkpoint (key, value from
// before; at least one), all in one sentence: "the checkpoint was written before a and b existed,
// when the run trained as `a x` and `b y`; set those lines in the deck to resume it as it ran".
std::string keys_added_later_refusal(const std::vector<std::pair<std::string, std::string>>& keys);
// Rebuilds a model of the named family from its stored configuration (parameters uninitialised).
std::unique_ptr<Model> model_from_config(const std::string& family, const std::string& config, int capacity,
                                         const std::string& origin);
// Rebuilds the model a weights file describes and loads its parameters (and extra datasets);
// `capacity` rows per network batch (predict's PredictOptions::chunk); `choice`: the EMA or the
// trained weights (Note [weights choice] in nn/weights_io.cpp). `loaded`, when given, receives
// "ema" or "raw": the set loaded.
std::unique_ptr<Model> load_model(const std::string& weights_file, int capacity,
                                  nn::WeightsChoice choice = nn::WeightsChoice::preferred,
                                  std::string* loaded = nullptr);
// For messages: the families whose models do (or do not) generate ensembles, with their articles
// ("an mlp", "a diffusion", joined by " or ").
std::string families_generating_ensembles(bool ensembles);
// The same, among the families that run in the in-situ library (ModelFamily::runs_in_situ).
std::string in_situ_families(bool ensembles);

}  // namespace hpct
