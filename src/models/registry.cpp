// The list of network model families (see registry.hpp): one line per family; building them from
// decks and rebuilding them from weights files (Note [stored configuration]).
#include "models/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "nn/weights_io.hpp"

namespace hpct {

ModelFamily mlp_family();        // models/mlp/mlp_family.cpp
ModelFamily diffusion_family();  // models/diffusion/diffusion_family.cpp
ModelFamily resnet_family();     // models/resnet/resnet_family.cpp
ModelFamily gnn_family();        // models/gnn/gnn_family.cpp
namespace smart {
ModelFamily smart_family();  // models/smart/smart_family.cpp
}
namespace lm {
ModelFamily transformer_family();  // models/transformer/transformer_family.cpp
}
namespace cape {
ModelFamily cape_family();  // models/cape/cape_family.cpp
}

namespace {
std::vector<ModelFamily>& registered() {
  // One line per family; the comments keep clang-format from packing them.
  static std::vector<ModelFamily> families = {
      mlp_family(),              // multilayer perceptron
      diffusion_family(),        // seed 000: conditional diffusion downscaler
      resnet_family(),           // seed 004: ResNet image classifier
      gnn_family(),              // seed 001: regional weather GNN
      smart::smart_family(),     // seed 002: SMART motion transformer
      lm::transformer_family(),  // decoder-only language model
      cape::cape_family(),       // seed 004: category-agnostic keypoints (CAPE)
  };
  return families;
}
}  // namespace

const std::vector<ModelFamily>& model_families() { return registered(); }

void register_model_family(const ModelFamily& family) {
  if (find_model_family(family.name))
    throw Error(std::string("internal: model family '") + family.name + "' twice");
  registered().push_back(family);
}

const ModelFamily* find_model_family(const std::string& name) {
  for (const ModelFamily& f : model_families())
    if (name == f.name) return &f;
  return nullptr;
}

void declare_model_keys(deck::Schema& s) {
  for (const ModelFamily& f : model_families()) f.declare_keys(s);
}

const FieldSpec& ModelBuildContext::field(const std::string& name) const {
  std::string have;
  for (const FieldSpec& f : fields) {
    if (f.name == name) return f;
    have += (have.empty() ? "" : ", ") + f.describe();
  }
  deck.fail("data_file", "the " + deck.get_string("model") + " model reads a field '" + name + "'; the data has " +
                             (have.empty() ? std::string("none") : have));
}

int run_family_tool(const std::string& family, FamilyTool tool, int argc, char** argv) {
  const ModelFamily* f = find_model_family(family);
  int (*main)(int, char**) = nullptr;
  if (f)
    main = tool == FamilyTool::generate      ? f->generate
           : tool == FamilyTool::evaluate    ? f->evaluate
           : tool == FamilyTool::import_data ? f->import_data
                                             : f->predict;
  if (!main) {
    // A build error, not a user's: the app names a family without that tool.
    const char* what = tool == FamilyTool::generate      ? "generate"
                       : tool == FamilyTool::evaluate    ? "evaluate"
                       : tool == FamilyTool::import_data ? "import"
                                                         : "predict";
    if (f) std::fprintf(stderr, "internal: the %s family has no %s tool\n", family.c_str(), what);
    else std::fprintf(stderr, "internal: no model family '%s' (its %s tool was asked for)\n", family.c_str(), what);
    return static_cast<int>(ExitCode::failure);
  }
  return main(argc, argv);
}

std::unique_ptr<Model> make_model(const ModelBuildContext& ctx) {
  const std::string& name = ctx.deck.get_string("model");
  const ModelFamily* f = find_model_family(name);
  if (!f) ctx.deck.fail("model", "'" + name + "' is not a network model family");
  return f->build(ctx);
}

deck::Schema config_schema(const ModelFamily& f) {
  deck::Schema s;
  s.section(std::string("stored configuration (") + f.name + ")");
  if (f.declare_config_keys) f.declare_config_keys(s);
  f.declare_keys(s);
  return s;
}

namespace {
// A stored configuration as config_schema() reads it: today's key names (legacy_config_keys) and,
// for each of the family's keys_added_later it lacks, `key=value before` (Note [keys added later]);
// `added`, when given, receives those keys.
std::string config_settings(const ModelFamily& f, const std::string& config, std::vector<std::string>* added) {
  // Legacy names are renamed setting by setting; the values are checked by the schema as they are.
  std::string line;
  std::set<std::string> keys;
  std::istringstream settings(config);
  for (std::string s; settings >> s;) {
    for (const auto& [old_key, key] : f.legacy_config_keys)
      if (s.compare(0, old_key.size() + 1, old_key + "=") == 0) {
        s = key + s.substr(old_key.size());
        break;
      }
    keys.insert(s.substr(0, s.find('=')));
    line += (line.empty() ? "" : " ") + s;
  }
  for (const auto& [key, before] : f.keys_added_later)
    if (!keys.count(key)) {
      line += (line.empty() ? "" : " ") + key + "=" + before;
      if (added) added->push_back(key);
    }
  return line;
}

// `key`'s values in two decks whose schemas declare it, compared as its type reads them (a bool's
// `no` and `false`, a real's `0.10` and `0.1` alike).
bool same_value(const deck::Deck& a, const deck::Deck& b, const std::string& key) {
  switch (a.schema().find(key)->type) {
    case deck::KeyType::Bool: return a.get_bool(key) == b.get_bool(key);
    case deck::KeyType::Int: return a.get_int(key) == b.get_int(key);
    case deck::KeyType::Real: return a.get_real(key) == b.get_real(key);
    case deck::KeyType::IntList: return a.get_int_list(key) == b.get_int_list(key);
    default: return a.get_string(key) == b.get_string(key);
  }
}
}  // namespace

deck::Deck parse_config(const ModelFamily& f, const std::string& config, const std::string& origin) {
  return deck::Deck::parse_settings(config_settings(f, config, nullptr), origin, config_schema(f));
}

std::string normalised_config(const ModelFamily& f, const std::string& config) {
  return parse_config(f, config, "config").settings();
}

// Note [keys added later]
// A model's config_string writes every key of its family's config schema, so a key missing from a
// stored configuration was declared after the file was written (e.g. the mlp's label_smoothing,
// Note [stored label smoothing]). For most keys the code before them ran as their default (a new
// option, off): read for rebuilding a model, such a key takes its default; compared with a model
// that takes the file over (an in-situ checkpoint loaded into a model built from today's deck) it
// is not recorded, and the deck's value holds, the rule of train's resume for deck keys newer than
// the checkpoint (train/resume.cpp). Comparing defaults instead refused every such file whose deck
// sets the new key. A few keys came with a default that is not what the code before them did: the
// mlp's standardize_inputs and standardize_targets, true since they came, while the runs before
// them trained on the numbers as they are. Taking today's default would rebuild an old weights file
// with standardisation it never had, and let a deck that leaves them out continue an old checkpoint
// as another model, silently. So the family lists them with their value from before
// (ModelFamily::keys_added_later), one table for every reader: a stored configuration without the
// key reads that value (parse_config), a model taking the file over must have it (here, with a
// message naming the deck line that resumes the run as it ran), and train's resume asks the same of
// a checkpoint's deck (Note [keys newer than the checkpoint]). A key the model at hand ignores
// (ModelFamily::ignores_key: the mlp's standardize_targets when the loss is not mse) is asked for by
// none of them: its value from before would change nothing. A new key that changes the
// parameters' sizes still meets read_checkpoint's check of the stored parameter count.
std::string config_difference(const ModelFamily& f, const std::string& stored, const std::string& current) {
  std::vector<std::string> added;  // keys_added_later the stored configuration lacks
  const deck::Deck old = deck::Deck::parse_settings(config_settings(f, stored, &added), "stored config",
                                                    config_schema(f));
  const deck::Deck now = parse_config(f, current, "config");
  // settings(): every key in schema order as key=value, values in their normalised form, no spaces.
  std::istringstream a(old.settings()), b(now.settings());
  std::string sa, sb, differences;
  std::vector<std::pair<std::string, std::string>> to_set;  // keys added later: key, value from before
  for (const deck::KeySpec& k : old.schema().keys()) {
    a >> sa;
    b >> sb;
    if (!old.is_set(k.name) || same_value(old, now, k.name)) continue;
    const std::size_t value = k.name.size() + 1;  // after "key="
    const std::string sep = differences.empty() ? "" : ", ";
    if (std::find(added.begin(), added.end(), k.name) == added.end()) {
      differences += sep + k.name + ": '" + sa.substr(value) + "' stored, '" + sb.substr(value) + "' now";
      continue;
    }
    if (key_added_later_refusal(f, now, k.name).empty()) continue;  // a key the model ignores
    differences += sep + k.name + ": '" + sb.substr(value) + "' now";
    for (const auto& [name, before] : f.keys_added_later)
      if (name == k.name) to_set.emplace_back(name, before);
  }
  return to_set.empty() ? differences : differences + "; " + keys_added_later_refusal(to_set);
}

std::string keys_added_later_refusal(const std::vector<std::pair<std::string, std::string>>& keys) {
  if (keys.size() == 1)
    return "the checkpoint was written before this key existed, when the run trained as `" + keys[0].first + " " +
           keys[0].second + "`; set that line in the deck to resume it as it ran";
  std::string names, lines;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string sep = i == 0 ? "" : i + 1 == keys.size() ? " and " : ", ";
    names += sep + keys[i].first;
    lines += sep + "`" + keys[i].first + " " + keys[i].second + "`";
  }
  return "the checkpoint was written before " + names + " existed, when the run trained as " + lines +
         "; set those lines in the deck to resume it as it ran";
}

std::string key_added_later_refusal(const ModelFamily& f, const deck::Deck& deck, const std::string& key) {
  if (f.ignores_key && f.ignores_key(deck, key)) return {};  // its value changes nothing
  for (const auto& [name, before] : f.keys_added_later)
    if (name == key && !same_value(parse_config(f, key + "=" + before, "keys_added_later"), deck, key))
      return keys_added_later_refusal({{key, before}});
  return {};
}

std::unique_ptr<Model> model_from_config(const std::string& family, const std::string& config, int capacity,
                                         const std::string& origin) {
  const ModelFamily* f = find_model_family(family);
  if (!f) throw Error(origin + ": model family '" + family + "' is unknown to this build", ExitCode::bad_input);
  if (!f->from_config) throw Error(origin + ": the " + family + " family cannot be rebuilt from its weights file");
  return f->from_config(parse_config(*f, config, origin + ": config"), capacity);
}

std::unique_ptr<Model> load_model(const std::string& weights_file, int capacity, nn::WeightsChoice choice,
                                  std::string* loaded) {
  std::string family, config;
  {
    const h5::File f = h5::File::open_read(weights_file);
    for (const char* key : {"model", "config"})
      if (!h5::has_attr(f, "/", key))
        throw Error(weights_file + ": no '" + key + "' attribute: not a weights file written by train",
                    ExitCode::bad_input);
    family = h5::read_attr_string(f, "/", "model");
    config = h5::read_attr_string(f, "/", "config");
  }
  std::unique_ptr<Model> model = model_from_config(family, config, capacity, weights_file);
  const nn::Attributes attrs = nn::read_weights(weights_file, model->store(), choice);
  if (loaded) *loaded = attrs.at("weights");
  model->load_extra_datasets(weights_file);
  return model;
}

namespace {
std::string families_named(bool ensembles, bool in_situ_only) {
  std::string out;
  for (const ModelFamily& f : model_families())
    if (f.generates_ensembles == ensembles && (f.runs_in_situ || !in_situ_only))
      out += (out.empty() ? "" : " or ") + std::string(f.article) + " " + f.name;
  return out;
}
}  // namespace

std::string families_generating_ensembles(bool ensembles) { return families_named(ensembles, false); }
std::string in_situ_families(bool ensembles) { return families_named(ensembles, true); }

}  // namespace hpct
