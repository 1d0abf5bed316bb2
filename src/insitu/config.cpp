// The in-situ deck keys and their one-time parse (see config.hpp).
#include "insitu/config.hpp"

#include "models/registry.hpp"
#include "train/driver.hpp"

namespace hpct::insitu {

deck::Schema insitu_schema() {
  deck::Schema s = full_schema();
  s.section("in-situ (libhpctrain): sessions over a rolling buffer filled by a running simulation");
  s.add_int("input_width", 0, 0, 1 << 24, "in-situ: values per sample of the inputs (diffusion: the context)");
  s.add_int("target_width", 0, 0, 1 << 24, "in-situ: values per sample of the targets (diffusion: the fine patch)");
  s.add_int("buffer_capacity", 4096, 1, 1ll << 32,
            "in-situ: samples each rank's rolling buffer keeps (the oldest are overwritten)");
  s.add_int("session_epochs", 1, 1, 1 << 20, "in-situ: epochs over the buffer per training session");
  s.add_choice("session_trigger", "explicit", {"explicit", "when_full", "every_pushes"},
               "in-situ: when hpctrain_train_if_due runs a session (explicit: never; hpctrain_train always does)");
  s.add_int("session_every_pushes", 0, 0, 1ll << 40,
            "in-situ: session_trigger every_pushes: push calls per session");
  s.add_choice("stats_update", "frozen", {"frozen", "every_session"},
               "in-situ: normalisation statistics fixed at the first session, or refreshed at every session");
  s.add_choice("stats_source", "pushed", {"pushed", "buffer"},
               "in-situ: statistics over every sample ever pushed (online, as seed 000), or two-pass over "
               "the session's buffer exactly as `train` computes them over a file");
  s.add_int("checkpoint_every_sessions", 0, 0, 1 << 30,
            "in-situ: write a checkpoint to checkpoint_dir every N sessions");
  s.add_int("planned_sessions", 100, 1, 1 << 30, "in-situ: sessions the lr_schedule cosine horizon covers");
  s.add_choice("sample_method", "ddpm", {"ddpm", "ddim"}, "in-situ: diffusion ensemble sampler");
  s.add_int("sample_steps", 0, 0, 100000, "in-situ: ddim timesteps (0: all)");
  s.add_real("sample_clip", 6.0, 0.0, 1e6, "in-situ: clip of the x0 prediction (normalised units; 0: off)");
  s.add_choice("predict_weights", "ema", {"ema", "raw"},
               "in-situ: with ema_decay, predictions from the EMA of the weights or from the trained weights "
               "(optimizer_sharding: always the trained weights, as prediction is local to a rank)");
  return s;
}

deck::Deck parse_insitu_deck(const std::string& text, const std::string& filename) {
  const deck::Schema schema = insitu_schema();
  return deck::Deck::parse(text, filename, schema, {"data_file=(in-situ buffer)"});
}

InsituConfig InsituConfig::from_deck(const deck::Deck& d) {
  InsituConfig c;
  c.train = TrainConfig::from_deck(d);
  const ModelFamily* family = find_model_family(c.train.model);
  if (!family || !family->runs_in_situ) {
    std::string families;
    for (const ModelFamily& f : model_families())
      if (f.runs_in_situ) families += (families.empty() ? "" : ", ") + std::string(f.name);
    d.fail("model", "the in-situ library trains the families that read rows of floats (" + families + "), not " +
                        c.train.model);
  }
  // A session trains on the buffer and validates on nothing: no loss to watch.
  if (c.train.schedule.kind == "plateau")
    d.fail("lr_schedule",
           "plateau watches a validation loss, which in-situ sessions do not compute (use constant "
           "or cosine)");
  if (c.train.early_stopping_patience > 0)
    d.fail("early_stopping_patience", "in-situ sessions compute no validation loss; set it to 0");
  c.input_width = static_cast<int>(d.get_int("input_width"));
  c.target_width = static_cast<int>(d.get_int("target_width"));
  if (c.input_width < 1) d.fail("input_width", "required by the in-situ library (values per sample of the inputs)");
  if (c.target_width < 1)
    d.fail("target_width", "required by the in-situ library (values per sample of the targets)");
  c.buffer_capacity = static_cast<std::uint64_t>(d.get_int("buffer_capacity"));
  c.session_epochs = static_cast<std::uint64_t>(d.get_int("session_epochs"));
  c.session_trigger = d.get_string("session_trigger");
  c.session_every_pushes = static_cast<std::uint64_t>(d.get_int("session_every_pushes"));
  if (c.session_trigger == "every_pushes" && c.session_every_pushes == 0)
    d.fail("session_every_pushes", "session_trigger every_pushes needs session_every_pushes >= 1");
  c.stats_every_session = d.get_string("stats_update") == "every_session";
  c.stats_from_buffer = d.get_string("stats_source") == "buffer";
  c.checkpoint_every_sessions = static_cast<std::uint64_t>(d.get_int("checkpoint_every_sessions"));
  if (c.checkpoint_every_sessions > 0 && c.train.checkpoint_dir.empty())
    d.fail("checkpoint_every_sessions", "needs checkpoint_dir");
  c.planned_sessions = static_cast<std::uint64_t>(d.get_int("planned_sessions"));
  c.sample_method = d.get_string("sample_method");
  c.sample_steps = static_cast<int>(d.get_int("sample_steps"));
  c.sample_clip = d.get_real("sample_clip");
  c.predict_with_ema = d.get_string("predict_weights") == "ema";
  return c;
}

}  // namespace hpct::insitu
