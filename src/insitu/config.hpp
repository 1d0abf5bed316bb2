// The in-situ library's deck: the `train` schema (train/full_schema.cpp full_schema) plus the keys of
// sessions over a rolling buffer, parsed once into InsituConfig. The training keys (batch_size,
// optimizer, precision, model family...) mean exactly what they mean for `train`.
#pragma once

#include <cstdint>
#include <string>

#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "train/config.hpp"

namespace hpct::insitu {

struct InsituConfig {
  TrainConfig train;  // the shared training configuration (data_file unused)
  int input_width = 0, target_width = 0;
  std::uint64_t buffer_capacity = 4096;  // samples each rank keeps; the oldest are overwritten
  std::uint64_t session_epochs = 1;
  std::string session_trigger = "explicit";  // explicit | when_full | every_pushes
  std::uint64_t session_every_pushes = 0;
  bool stats_every_session = false;  // stats_update every_session (else frozen after the first)
  bool stats_from_buffer = false;    // stats_source buffer (else pushed: online over all pushes)
  std::uint64_t checkpoint_every_sessions = 0;
  std::uint64_t planned_sessions = 100;  // horizon of lr_schedule cosine
  std::string sample_method = "ddpm";
  int sample_steps = 0;
  double sample_clip = 6.0;
  bool predict_with_ema = true;  // predict_weights ema: predictions from the EMA of the weights (ema_decay)

  static InsituConfig from_deck(const deck::Deck& deck);
};

// full_schema() plus the in-situ section.
deck::Schema insitu_schema();

// Parses deck text (named `filename` in messages). Note [data_file]: the in-situ library has no
// data file, so the key `train` requires is always supplied as an override (a deck shared with
// `train` keeps its data_file line; the value is unused here).
deck::Deck parse_insitu_deck(const std::string& text, const std::string& filename);

}  // namespace hpct::insitu
