// The tiny `model smart` deck, scene files and rank fixture the smart tests share (test_smart,
// test_smart_types, test_smart_windows).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "models/smart/smart_model.hpp"
#include "models/smart/traffic_sim.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

namespace hpct::test {

// trajgen scenes (seed 7) written by rank 0 under the build tree; churn > 0: agents come and go.
inline std::string smart_scenes_file(const Comm& comm, const std::string& name, std::uint64_t scenes,
                                     double churn = 0) {
  const std::string path = scratch(name + ".h5");
  scenes::SceneOptions options;
  options.churn = churn;
  if (comm.rank() == 0) scenes::write_scenes(path, 7, scenes, options);
  comm.barrier();
  return path;
}

inline const char* const kSmartTiny =
    "model smart\ndata_format hdf5_fields\nfields agent_state, agent_type, map_polyline, map_type\n"
    "smart_hidden 16\nsmart_heads 2\nsmart_map_layers 1\nsmart_agent_layers 1\nmotion_vocab 64\nsmart_freqs 4\n"
    "smart_map_neighbours 4\nsmart_agent_neighbours 4\nsmart_time_span 3\nlr 0.003\nvalidation_fraction 0.25\n"
    "log_every 1000\n";

// Masked variants (Note [validity masks]) read agent_valid too.
inline const char* const kSmartMaskedFields = "fields=agent_state, agent_type, map_polyline, map_type, agent_valid";

// A tiny run through the trainer: its parameters, summary and motion vocabulary.
struct TrainRun {
  std::vector<float> params;
  TrainSummary summary;
  std::vector<double> vocab;  // the motion vocabulary's table
};

inline TrainRun train(const Comm& comm, const std::string& data, const std::vector<std::string>& overrides) {
  const deck::Deck deck = make_deck(std::string(kSmartTiny) + "data_file " + data + "\n", overrides);
  NetworkTrainer t(deck, comm);
  TrainRun r;
  r.summary = t.run();
  auto h = to_host(t.model().store().params());
  r.params.assign(h.data(), h.data() + h.extent(0));
  r.vocab = dynamic_cast<smart::SmartModel&>(t.model()).vocab().table();
  return r;
}

// The world and a communicator of this rank alone: a run on 1 rank against the same on p ranks.
class SmartRanks : public ::testing::Test {
 protected:
  const Comm world;
  SelfComm self;
  const Comm one{self.raw};
  const int p = world.size();
};

}  // namespace hpct::test
