// The gnn's forecast evaluation (apps/wxeval): rollouts of a trained model from held-out initial
// times of a netcdf file to `lead_steps` steps, interior squared errors per lead time and state
// variable for the model and for persistence, summed over this rank's block of samples.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "data/dataset.hpp"
#include "data/grid_samples.hpp"
#include "models/gnn/forecast_file.hpp"
#include "models/gnn/gnn_model.hpp"
#include "nn/weights_io.hpp"

namespace hpct {

struct RolloutSums {
  std::vector<std::string> variables;  // the state variables
  int leads = 0;
  std::vector<double> model, persistence;  // [lead * variables + v]: sums of squared errors
  std::vector<double> climatology;         // the same for the training part's mean state per point
  std::uint64_t samples = 0;               // this rank's samples
  std::uint64_t total_samples = 0;         // over all ranks (the held-out part)
  int interior_points = 0;
  // The first held-out initial time (rank 0): truth and forecast [lead][variable][ny][nx].
  std::vector<float> truth, forecast;
  int ny = 0, nx = 0;
  double step_s = 0;  // the data file's time step in seconds (0: it has no time coordinate)
};

// Samples [floor(from * rows), rows) of `data_file` opened with the model's variables and
// ar_steps = lead_steps, split into contiguous blocks over the ranks of `comm`, rolled out in
// batches of `batch` (the ranks take their batches in rounds; an error on one rank stops every rank
// with it). The climatology is the mean state of every variable at every point over the samples
// before `from` (over all samples when there are none). With `forecast_file`, rank 0 writes every
// held-out sample's forecast there (forecast_file.hpp; `source` its global attribute). Errors name
// the files.
RolloutSums gnn_rollout_sums(const std::string& weights, const std::string& data_file, int lead_steps, double from,
                             int batch, const Comm& comm, nn::WeightsChoice choice = nn::WeightsChoice::preferred,
                             const std::string& forecast_file = "", const std::string& source = "");

// `data_file` opened as the model of `weights` was trained on it (its variables and derived inputs),
// `ar_steps` targets per sample; states_only: its state variables alone (wxeval --boundary);
// forecast_inputs: the file need not hold a complete sample (wxeval --init, Note [future inputs]).
// Errors name the file when its grid is not the model's size.
std::shared_ptr<const Dataset> open_model_data(const GnnModelConfig& c, const std::string& data_file, int ar_steps,
                                               const std::string& weights, bool states_only = false,
                                               bool forecast_inputs = false);
// The forecast file's grid and initial times (these time indices of `data`; Note [forecast layout]).
ForecastGrid forecast_grid(const GridSamples& data, const std::vector<std::size_t>& init_indices,
                           const GnnModelConfig& c, int leads, const std::string& source);
// Errors unless the data's points are where the model's were in training (when it knows them).
// `grid` [2][N]: each point's longitude, then latitude (field grid of one sample).
void check_point_positions(const GnnModel& model, const float* grid, const std::string& data_file,
                           const std::string& weights);
void check_positions(const GnnModel& model, const Dataset& data, const std::vector<FieldSpec>& specs,
                     const std::string& data_file, const std::string& weights);

}  // namespace hpct
