// predict's command line for a network weights file: its usage, options and the dataset of DATA.h5
// each of the model's inputs reads (predict_network.cpp runs it).
#pragma once

#include <string>
#include <vector>

#include "models/model.hpp"
#include "nn/weights_io.hpp"

namespace hpct::tools {

struct NetworkOptions {
  std::string weights, data, out, inputs_dataset;
  nn::WeightsChoice weights_choice = nn::WeightsChoice::preferred;
  std::string weight_set;  // the set loaded: ema or raw
  std::vector<std::string> outputs;
  PredictOptions predict;
  long long rows = -1;
  bool labelled = true;                    // a CSV/TSV file holds the training file's label column
  std::string weight_column, weight_file;  // a labelled table's row weights: weighted metrics
  std::vector<std::string> sets;           // --set KEY=VALUE: image data's training deck keys changed
};

// predict WEIGHTS DATA OUT [options] (argv[0] is the program; --kokkos-* options are skipped).
// Errors (bad_input) name the option, with the usage where it helps.
NetworkOptions parse_network_options(int argc, char** argv);

// "state, forcing, static": the model's inputs by name, for messages.
std::string names_text(const std::vector<NamedShape>& inputs);

// The dataset of DATA.h5 each of the model's inputs reads: the input's name, or --inputs-dataset's
// (a bare DATASET for a one-input model; NAME=DATASET pairs for any). Errors name the option.
std::vector<std::string> input_datasets(const std::string& option, const std::vector<NamedShape>& inputs,
                                        const std::string& family);

}  // namespace hpct::tools
