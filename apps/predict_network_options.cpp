// predict's command line for a network weights file (see predict_network_options.hpp).
#include "predict_network_options.hpp"

#include <climits>

#include "core/cli_number.hpp"
#include "core/error.hpp"
#include "core/tool_options.hpp"
#include "deck/deck.hpp"
#include "predict_network.hpp"

namespace hpct::tools {

const char* const kNetworkUsage =
    "usage: predict WEIGHTS.h5 DATA.h5 OUT.h5 [options]   (a network's weights file written by train)\n"
    "  --inputs-dataset D      the inputs dataset of DATA.h5 (default: the input's name, e.g. inputs); a model\n"
    "                          that reads several inputs (gnn: state, forcing, static) reads one dataset each,\n"
    "                          named as the input unless given as NAME=DATASET[,NAME=DATASET...]\n"
    "  --outputs A,B           only these outputs (default: all the model predicts)\n"
    "  --rows N                only the first N rows (default: all)\n"
    "  --chunk R               rows per network batch (ensembles: (row, member) pairs; default 2048)\n"
    "  --weights ema|raw       the EMA of the weights (default, when the file has one) or the trained ones\n"
    "  --watchdog-timeout S    end the job when a rank makes no progress for 2 S + 5 s, naming it and its\n"
    "                          place (default 600; 0: off; docs/data-parallel.md)\n"
    "  --no-label              DATA.csv/.tsv has no label column (a model trained on a table: read as training "
    "read it)\n"
    "  --weight-column N|NAME  DATA.csv/.tsv: the row weight column (not a feature): weighted metrics, as train's\n"
    "                          weighted validation (sum w l / sum w; docs/row_weights.md)\n"
    "  --weight-file FILE      one weight per row of DATA.csv/.tsv/LibSVM (as train's weight_file): weighted "
    "metrics\n"
    "  --set KEY=VALUE         image data (a folder, a COCO .json): a key of the training deck, which the\n"
    "                          weights file keeps, changed for DATA (check_images_at_open, broken_images, ...)\n"
    "  models that generate ensembles (diffusion):\n"
    "  --members M --seed K --method ddpm|ddim --steps S --clip X   as apps/sample (defaults 8, 1, ddpm, all, 6)\n"
    "OUT.h5 gets one float32 dataset per output, rows in data order: mlp `outputs` [N, d_out] (values;\n"
    "logits for classifiers) and for classifiers `probabilities` [N, d_out]; diffusion `ensembles`\n"
    "[N, members, n_fine]; gnn `forecast` [N, S, P] (from the datasets state, forcing, static). A model\n"
    "trained on a CSV/TSV table also reads DATA.csv or DATA.tsv: the training file's columns, text\n"
    "columns coded as in training (docs/tables.md); a network reads DATA.svm/.libsvm as its training\n"
    "LibSVM file was read (absent entries 0 or missing, as the weights file keeps). A model trained on image\n"
    "files reads a folder (or a COCO .json) as training read its data, through the training deck: files the\n"
    "check at open refuses stop it, or with broken_images skip have no row and are listed in\n"
    "OUT.broken_images.tsv; OUT's rows follow the files in name order, OUT.files.tsv names them "
    "(docs/outputs.md).\n";

NetworkOptions parse_network_options(int argc, char** argv) {
  NetworkOptions o;
  o.predict.chunk = 2048;
  const std::vector<std::string> pos = read_tool_options(
      argc, argv, "predict: ", kNetworkUsage, [&](const std::string& a, const auto& value) {
        if (a == "--no-label") {
          o.labelled = false;
          return;
        }
        const std::string v = value();
        auto number = [&]() { return cli_integer("predict: " + a, v); };
        auto positive_int = [&]() {
          const long long x = number();
          if (x < 1 || x > INT_MAX) throw Error("predict: " + a + " must be in [1, 2^31)", ExitCode::bad_input);
          return static_cast<int>(x);
        };
        if (a == "--inputs-dataset") o.inputs_dataset = v;
        else if (a == "--outputs") o.predict.outputs = deck::split_list(v);
        else if (a == "--rows") o.rows = number();
        else if (a == "--weight-column") o.weight_column = v;
        else if (a == "--weight-file") o.weight_file = v;
        else if (a == "--set") o.sets.push_back(v);
        else if (a == "--chunk") o.predict.chunk = positive_int();
        else if (a == "--weights") o.weights_choice = nn::weights_choice(v, "predict: --weights");
        else if (a == "--members") o.predict.sampling.members = positive_int();
        else if (a == "--seed") o.predict.sampling.seed = static_cast<std::uint64_t>(number());
        else if (a == "--method") o.predict.sampling.method = v;
        else if (a == "--steps") o.predict.sampling.steps = static_cast<int>(number());
        else if (a == "--clip") o.predict.sampling.clip = cli_real("predict: " + a, v);
        else throw Error("predict: unknown option " + a + "\n" + kNetworkUsage, ExitCode::bad_input);
      });
  if (pos.size() != 3)
    throw Error(std::string("predict: expected WEIGHTS DATA OUT\n") + kNetworkUsage, ExitCode::bad_input);
  o.weights = pos[0], o.data = pos[1], o.out = pos[2];
  if (!o.weight_column.empty() && !o.weight_file.empty())
    throw Error("predict: --weight-column and --weight-file both give the rows' weights: give one",
                ExitCode::bad_input);
  if ((!o.weight_column.empty() || !o.weight_file.empty()) && !o.labelled)
    throw Error("predict: row weights weigh the metrics of labelled rows; --no-label has none",
                ExitCode::bad_input);
  return o;
}

std::string names_text(const std::vector<NamedShape>& inputs) {
  std::string s;
  for (const NamedShape& in : inputs) s += (s.empty() ? "" : ", ") + in.name;
  return s;
}


// (a bare DATASET for a one-input model; NAME=DATASET pairs for any).
std::vector<std::string> input_datasets(const std::string& option, const std::vector<NamedShape>& inputs,
                                        const std::string& family) {
  std::vector<std::string> out;
  for (const NamedShape& in : inputs) out.push_back(in.name);
  if (option.empty()) return out;
  if (option.find('=') == std::string::npos) {
    if (inputs.size() != 1)
      throw Error("predict: --inputs-dataset " + option + ": the " + family + " model reads " +
                      std::to_string(inputs.size()) + " inputs (" + names_text(inputs) +
                      "), one dataset each: give NAME=DATASET pairs (e.g. " + inputs.front().name + "=" + option +
                      ")",
                  ExitCode::bad_input);
    out.front() = option;
    return out;
  }
  std::vector<char> given(inputs.size(), 0);
  for (const std::string& pair : deck::split_list(option)) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
      throw Error("predict: --inputs-dataset: '" + pair + "' is not NAME=DATASET", ExitCode::bad_input);
    const std::string name = pair.substr(0, eq);
    std::size_t k = 0;
    while (k < inputs.size() && inputs[k].name != name) ++k;
    if (k == inputs.size())
      throw Error("predict: --inputs-dataset: the " + family + " model has no input '" + name + "' (it reads " +
                      names_text(inputs) + ")",
                  ExitCode::bad_input);
    if (given[k]) throw Error("predict: --inputs-dataset: input '" + name + "' given twice", ExitCode::bad_input);
    given[k] = 1;
    out[k] = pair.substr(eq + 1);
  }
  return out;
}

// A labelled table's metrics, as train's validation computes them (train/evaluator.hpp): with row

}  // namespace hpct::tools
