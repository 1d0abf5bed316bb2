// What the gnn training tests share: the wxgen file the fixture gnn_wx_data writes, a small deck
// for it, and a run of `train` on it returning the trained parameters.
#pragma once

#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "train/trainer.hpp"

namespace hpct::test {

inline const std::string kGnnData = "scratch_gnn_wx.nc";  // written by the fixture (wxgen, 12 x 9, 61 hours)
inline const std::string kGnnDeck =
    "model gnn\ndata_format netcdf\nstate_variables h, u, v, q\nforcing_variables sun\nstatic_variables orog\n"
    "gnn_latent 8\ngnn_layers 2\nboundary_width 1\nepochs 2\nlr 0.003\noptimizer adamw\nvalidation_fraction 0.2\n"
    "log_every 100000\ndata_file " +
    kGnnData + "\n";  // 14 lines

inline std::vector<float> params_of(NetworkTrainer& t) {
  auto h = to_host(t.model().store().params());
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

// kGnnDeck with the overrides, trained on `comm`.
inline std::vector<float> train_gnn(const Comm& comm, const std::vector<std::string>& overrides) {
  NetworkTrainer t(make_deck(kGnnDeck, overrides), comm);
  t.run();
  return params_of(t);
}

}  // namespace hpct::test
