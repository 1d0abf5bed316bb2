// convert: writes a trained model in a format other tools load: a GBDT model file as XGBoost's JSON
// model or LightGBM's text model, network weights (HDF5 from train) as safetensors for PyTorch.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/runtime.hpp"
#include "gbdt/export.hpp"
#include "gbdt/model_io.hpp"
#include "models/registry.hpp"
#include "nn/safetensors.hpp"

namespace {

const char* kUsage =
    "usage: convert --to xgboost|lightgbm|safetensors [--weights ema|raw] INPUT OUTPUT\n"
    "  xgboost      GBDT model file -> XGBoost JSON model (xgboost.Booster(model_file=OUTPUT))\n"
    "  lightgbm     GBDT model file -> LightGBM text model (lightgbm.Booster(model_file=OUTPUT))\n"
    "  safetensors  network weights (HDF5 written by train) -> safetensors with PyTorch state_dict\n"
    "               names (safetensors.torch.load_file(OUTPUT)); the model family and config, and\n"
    "               any non-trainable datasets (normalisation), are in the header's __metadata__;\n"
    "               --weights: the EMA of the weights (default, when the file has one) or the\n"
    "               trained ones (metadata hpctrain.weights says which)\n"
    "Predictions of the converted model equal ours; see docs/gbdt.md and docs/outputs.md.\n";

// The weights' tensors under their state_dict names ("fc0/weight" -> "fc0.weight"), in the order
// the model registers them, and the file's description as metadata.
void weights_to_safetensors(const std::string& in, const std::string& out, hpct::nn::WeightsChoice choice) {
  using namespace hpct;
  std::string weight_set;
  std::unique_ptr<Model> model = load_model(in, 1, choice, &weight_set);
  nn::ParameterStore<float>& store = model->store();
  auto host = to_host(store.params());
  std::vector<nn::NamedTensor> tensors;
  for (const auto& t : store.tensors()) {
    nn::NamedTensor nt;
    nt.name = t.name;
    for (char& c : nt.name)
      if (c == '/') c = '.';
    nt.shape = t.shape;
    nt.values.assign(host.data() + t.offset, host.data() + t.offset + t.size);
    tensors.push_back(std::move(nt));
  }
  std::map<std::string, std::string> meta{{"format", "pt"},
                                          {"hpctrain.model", model->family()},
                                          {"hpctrain.config", model->config_string()},
                                          {"hpctrain.weights", weight_set}};
  // Non-trainable datasets are not parameters (a strict load_state_dict would refuse them): they
  // go into the metadata as one JSON object {"normalisation/fine_mean": [...], ...}.
  const ExtraDatasets extras = model->extra_datasets();
  if (!extras.empty()) meta["hpctrain.extras"] = nlohmann::json(extras).dump();
  nn::write_safetensors(out, tensors, meta);
  Log::info(strf("convert: %zu tensors (%s weights) -> %s", tensors.size(), weight_set.c_str(), out.c_str()));
}

int convert_main(int argc, char** argv) {
  using namespace hpct;
  std::string to;
  nn::WeightsChoice choice = nn::WeightsChoice::preferred;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--to" && i + 1 < argc) to = argv[++i];
    else if (a == "--weights" && i + 1 < argc) choice = nn::weights_choice(argv[++i], "convert: --weights");
    else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      throw Error("convert: unknown option " + a + "\n" + kUsage, ExitCode::bad_input);
    } else {
      paths.push_back(a);
    }
  }
  if (paths.size() != 2 || to.empty()) throw Error(kUsage, ExitCode::bad_input);
  const std::string &in = paths[0], &out = paths[1];
  if (to == "xgboost" || to == "lightgbm") {
    const gbdt::Model m = gbdt::read_model(in);
    gbdt::write_file_atomic(out, to == "xgboost" ? gbdt::to_xgboost_json(m) : gbdt::to_lightgbm_text(m));
    Log::info(strf("convert: %zu trees -> %s (%s)", m.trees.size(), out.c_str(), to.c_str()));
    // Note [absent LibSVM entries]: the trees are the same; only XGBoost reads a LibSVM file otherwise.
    if (m.libsvm_absent_zero && to == "xgboost")
      Log::info(
          "convert: the model was trained with absent LibSVM entries as 0 (libsvm_absent zero); XGBoost "
          "reads a LibSVM file's absent entries as missing: give it the rows with their zeros written");
  } else if (to == "safetensors") {
    weights_to_safetensors(in, out, choice);
  } else {
    throw Error("convert: --to must be xgboost, lightgbm or safetensors, not '" + to + "'\n" + kUsage,
                ExitCode::bad_input);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI and Kokkos as in the other tools (the HDF5 library is the parallel build; a network's
  // parameters live in Kokkos views); a GPU build without a GPU hands over to its host twin.
  // One process, no communication.
  hpct::Runtime runtime(argc, argv);
  try {
    return convert_main(argc, argv);
  } catch (const hpct::Error& e) {
    std::fprintf(stderr, "convert: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {  // e.g. an allocation failure
    std::fprintf(stderr, "convert: error: %s\n", e.what());
    return 1;
  }
}
