// The list of network model families (see registry.hpp): one line per family; building them from
// decks and rebuilding them from weights files (Note [stored configuration]).
#include "models/registry.hpp"

#include <cstdio>
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
    main = tool == FamilyTool::generate ? f->generate : tool == FamilyTool::evaluate ? f->evaluate : f->import_data;
  if (!main) {
    // A build error, not a user's: the app names a family without that tool.
    const char* what = tool == FamilyTool::generate   ? "generate"
                       : tool == FamilyTool::evaluate ? "evaluate"
                                                      : "import";
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

deck::Deck parse_config(const ModelFamily& f, const std::string& config, const std::string& origin) {
  // Legacy names are renamed setting by setting; the values are checked by the schema as they are.
  std::string line;
  std::istringstream settings(config);
  for (std::string s; settings >> s;) {
    for (const auto& [old_key, key] : f.legacy_config_keys)
      if (s.compare(0, old_key.size() + 1, old_key + "=") == 0) {
        s = key + s.substr(old_key.size());
        break;
      }
    line += (line.empty() ? "" : " ") + s;
  }
  return deck::Deck::parse_settings(line, origin, config_schema(f));
}

std::string normalised_config(const ModelFamily& f, const std::string& config) {
  return parse_config(f, config, "config").settings();
}

// Note [keys added later]
// A model's config_string writes every key of its family's config schema, so a key missing from a
// stored configuration was declared after the file was written (e.g. the mlp's label_smoothing,
// Note [stored label smoothing]). Read for rebuilding a model it takes its default, the behaviour
// of the code that wrote the file; compared with a model that takes the file over (an in-situ
// checkpoint loaded into a model built from today's deck) it is not recorded, and the deck's value
// holds, the rule of train's resume for deck keys newer than the checkpoint (train/resume.cpp).
// Comparing defaults instead refused every such file whose deck sets the new key. A new key that
// changes the parameters' sizes still meets read_checkpoint's check of the stored parameter count.
std::string config_difference(const ModelFamily& f, const std::string& stored, const std::string& current) {
  const deck::Deck old = parse_config(f, stored, "stored config");
  const deck::Deck now = parse_config(f, current, "config");
  // settings(): every key in schema order as key=value, values in their normalised form, no spaces.
  std::istringstream a(old.settings()), b(now.settings());
  std::string sa, sb;
  for (const deck::KeySpec& k : old.schema().keys()) {
    a >> sa;
    b >> sb;
    if (!old.is_set(k.name) || sa == sb) continue;
    const std::size_t value = k.name.size() + 1;  // after "key="
    return k.name + ": '" + sa.substr(value) + "' stored, '" + sb.substr(value) + "' now";
  }
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
