// The list of network model families (see registry.hpp): one line per family.
#include "models/registry.hpp"

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "nn/weights_io.hpp"

namespace hpct {

ModelFamily mlp_family();        // models/mlp/mlp_family.cpp
ModelFamily diffusion_family();  // models/diffusion/diffusion_family.cpp

namespace {
std::vector<ModelFamily>& registered() {
  static std::vector<ModelFamily> families = {
      mlp_family(),
      diffusion_family(),
  };
  return families;
}
}  // namespace

const std::vector<ModelFamily>& model_families() { return registered(); }

void register_model_family(const ModelFamily& family) {
  if (find_model_family(family.name)) throw Error(std::string("internal: model family '") + family.name + "' twice");
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
  deck.fail("data_file", "the " + deck.get_string("model") + " model reads a field '" + name +
                             "'; the data has " + (have.empty() ? std::string("none") : have));
}

std::unique_ptr<Model> make_model(const ModelBuildContext& ctx) {
  const std::string& name = ctx.deck.get_string("model");
  const ModelFamily* f = find_model_family(name);
  if (!f) ctx.deck.fail("model", "'" + name + "' is not a network model family");
  return f->build(ctx);
}

std::unique_ptr<Model> load_model(const std::string& weights_file, int capacity) {
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
  const ModelFamily* fam = find_model_family(family);
  if (!fam) throw Error(weights_file + ": model family '" + family + "' is unknown to this build", ExitCode::bad_input);
  std::unique_ptr<Model> model = fam->from_config(config, capacity);
  nn::read_weights(weights_file, model->store());
  model->load_extra_datasets(weights_file);
  return model;
}

}  // namespace hpct
