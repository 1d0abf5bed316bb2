// The run test_best_output and test_early_stopping share: 48 training rows and a wide network at a
// high rate, so the validation loss falls for a few epochs and then rises; its stop by a signal
// before a resume; and what both read back (the weights file's tensors to compare runs bit for bit,
// metrics records, checkpoint paths).
#pragma once

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/signals.hpp"
#include "io/hdf5.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

namespace hpct::test {

constexpr std::uint64_t kOverfitRows = 80;

// The global batch 16 split over the ranks.
inline std::string overfit_batch(const Comm& comm) { return "batch_size=" + std::to_string(16 / comm.size()); }

// The deck's text on `data` for `epochs`.
inline std::string overfit_deck(const std::string& data, std::uint64_t epochs) {
  return "data_file " + data + "\nhidden_sizes 64,64\nactivation relu\nepochs " + std::to_string(epochs) +
         "\nlr 0.1\nvalidation_fraction 0.4\n"
         // Tuned to overfit the raw Friedman numbers within 10 epochs; standardised (the mlp's
         // default, Note [mlp standardisation]) it keeps improving, and the best epoch is the last.
         "standardize_inputs false\nstandardize_targets false\n";
}

// Runs the deck for `epochs` with `overrides` (a step hook, and the steps per epoch, when asked);
// returns the summary (a stop signal leaves it with stop_signal set). Ends with a barrier: rank 0
// has closed the metrics file before any rank reads it.
inline TrainSummary overfit_train(const Comm& comm, const std::string& data, std::uint64_t epochs,
                                  const std::vector<std::string>& overrides,
                                  std::function<void(std::uint64_t)> hook = {},
                                  std::uint64_t* steps_per_epoch = nullptr) {
  NetworkTrainer t(make_deck(overfit_deck(data, epochs), overrides), comm);
  if (hook) t.set_step_hook(hook);
  if (steps_per_epoch) *steps_per_epoch = t.sampler().steps_per_epoch();
  const TrainSummary s = t.run();
  comm.barrier();
  return s;
}

// overfit_train stopped by SIGUSR1 at optimizer step `stop_at`, raised on the last rank only (a
// scheduler's signal may reach one rank), with the stop handlers the train driver installs; `run`,
// the directory of its outputs and checkpoints, is created first (as the driver's
// prepare_output_paths would). The caller checks stop_signal: a run that ends first has none.
inline TrainSummary overfit_train_stopped(const Comm& comm, const std::string& data, std::uint64_t epochs,
                                          const std::vector<std::string>& overrides, const std::string& run,
                                          std::uint64_t stop_at) {
  if (comm.rank() == 0) std::filesystem::create_directories(run);
  comm.barrier();
  install_stop_handlers();
  const TrainSummary s = overfit_train(comm, data, epochs, overrides, [&](std::uint64_t step) {
    if (step == stop_at && comm.rank() == comm.size() - 1) std::raise(SIGUSR1);
  });
  clear_stop_signal();
  return s;
}

// Every dataset of a weights file, by name (the tensors, bit for bit).
inline std::map<std::string, std::vector<float>> weight_tensors(const std::string& path) {
  const h5::File f = h5::File::open_read(path);
  std::map<std::string, std::vector<float>> out;
  for (const std::string& name : h5::list_datasets(f)) out[name] = h5::read_all<float>(f, name);
  return out;
}

// The value of `field` in every record of `type` of a metrics file, in order (NaN for null).
inline std::vector<double> metrics_field(const std::string& path, const std::string& type,
                                         const std::string& field) {
  std::ifstream in(path);
  std::vector<double> out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"type\": \"" + type + "\"") == std::string::npos) continue;
    const auto at = line.find("\"" + field + "\": ");
    if (at == std::string::npos) continue;
    const std::string v = line.substr(at + field.size() + 4);
    out.push_back(v.rfind("null", 0) == 0 ? std::nan("") : std::stod(v));
  }
  return out;
}

// The checkpoint of optimizer step `step` in `dir` (train/checkpoint.hpp's file names).
inline std::string checkpoint_path(const std::string& dir, std::uint64_t step) {
  char name[64];
  std::snprintf(name, sizeof(name), "/ckpt-%09llu.h5", (unsigned long long)step);
  return dir + name;
}

}  // namespace hpct::test
