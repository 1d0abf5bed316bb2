// wxeval --init: the gnn's forecast from one initial time of a data file (its last included) to lead
// times past the file's end, the boundary strip of a limited-area model from a --boundary file
// (Note [future forecast] in data/grid_samples.hpp's grid_future.cpp); scored where the file holds the
// valid times.
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "nn/weights_io.hpp"

namespace hpct {

struct FutureForecast {
  std::vector<std::string> variables;  // the state variables
  int leads = 0;
  std::size_t init_index = 0, times = 0;  // the initial time's index in the data file, the file's times
  double init_time = 0, last_time = 0;    // seconds since 1970 (timed), else indices
  bool timed = false;
  double step_s = 0;
  std::vector<char> known;                 // [lead]: the data file holds the valid time (scored)
  std::vector<double> model, persistence;  // [lead * variables + v]: interior RMSE (known leads)
};

// `init`: "last", a time index of `data_file`, or a time yyyy-mm-ddThh[:mm] it holds. `boundary_file`:
// required for a limited-area model (boundary_width > 0), refused for a global one. With
// `forecast_file`, rank 0 writes the forecast there (one initial time, forecast_file.hpp). Every rank
// gets the same result; errors (exit 2) name the file, the variable and the time.
FutureForecast gnn_future_forecast(const std::string& weights, const std::string& data_file,
                                   const std::string& boundary_file, const std::string& init, int lead_steps,
                                   const Comm& comm, nn::WeightsChoice choice, const std::string& forecast_file,
                                   const std::string& source);

}  // namespace hpct
