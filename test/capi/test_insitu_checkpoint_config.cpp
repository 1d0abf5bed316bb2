// An in-situ checkpoint's stored model configuration against the model that loads it (Note [keys
// added later] in models/registry.cpp): a key the checkpoint lacks (written before the key was
// stored, as the mlp's label_smoothing once was) takes the deck's value and the checkpoint loads;
// a key it records with another value is refused, naming the key and both values; a key whose
// default is not what the run before it did (the mlp's standardize_inputs) must have that value.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "insitu/config.hpp"
#include "insitu/session.hpp"
#include "insitu/status.hpp"
#include "io/hdf5.hpp"
#include "support/test_support.hpp"

using namespace hpct;

namespace {

const char* const kDeck =
    "model mlp\nloss cross_entropy\nnum_classes 3\nlabel_smoothing 0.1\nhidden_sizes 4\nbatch_size 4\n"
    "lr 0.01\nseed 3\ninput_width 2\ntarget_width 1\nbuffer_capacity 16\n";

// The checkpoint at `from` copied to `to` with its configuration rewritten by `edit` (rank 0).
void edited_copy(const Comm& comm, const std::string& from, const std::string& to,
                 std::string (*edit)(const std::string&)) {
  if (comm.rank() == 0) {
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
    const h5::File f = h5::File::open_rw(to);
    h5::write_attr(f, "/", "config", edit(h5::read_attr_string(f, "/", "config")));
  }
  comm.barrier();
}

std::string replaced(const std::string& config, const std::string& from, const std::string& to) {
  const std::size_t at = config.find(from);
  return at == std::string::npos ? config : config.substr(0, at) + to + config.substr(at + from.size());
}

// Why `m` refuses to take over the checkpoint `file` ("" when it loads): a refusal is a shape error.
std::string load_refusal(insitu::InsituModel& m, const std::string& file) {
  try {
    m.load(file);
  } catch (const insitu::InsituError& e) {
    EXPECT_EQ(e.status(), insitu::Status::shape);
    return e.what();
  }
  return {};
}

}  // namespace

TEST(InsituCheckpointConfig, AKeyTheCheckpointLacksTakesTheDecksValue) {
  const Comm world;
  insitu::InsituModel m("ckpt", insitu::parse_insitu_deck(kDeck, "(deck text)"), world.raw());
  m.log().set_file(test::scratch("insitu_ckpt_config_log.txt"), false);
  std::vector<float> x(16), y(8);
  for (int i = 0; i < 8; ++i) {
    x[2 * i] = 0.1f * static_cast<float>(i + world.rank());
    x[2 * i + 1] = -0.3f * static_cast<float>(i);
    y[i] = static_cast<float>(i % 3);
  }
  m.push(x.data(), y.data(), 8, insitu::Order::row_major);
  m.train_session("t");
  ASSERT_NE(m.model().config_string().find(" label_smoothing=0.1"), std::string::npos);
  const std::string dir = test::empty_scratch_dir(world, "insitu_ckpt_config");
  const std::string saved = m.save(dir);

  const std::string older = dir + "/older.h5";  // as written before label_smoothing was stored
  edited_copy(world, saved, older, [](const std::string& c) { return replaced(c, " label_smoothing=0.1", ""); });
  EXPECT_NO_THROW(m.load(older));
  EXPECT_NO_THROW(m.load(saved));

  const std::string other = dir + "/other.h5";  // recorded, and not the deck's
  edited_copy(world, saved, other,
              [](const std::string& c) { return replaced(c, " label_smoothing=0.1", " label_smoothing=0.3"); });
  const std::string msg = load_refusal(m, other);
  EXPECT_NE(msg.find(other + ": holds another model (label_smoothing: '0.3' stored, '0.1' now)"), std::string::npos)
      << msg;
}

// An mlp checkpoint written before standardize_inputs and standardize_targets existed (faked: today's
// checkpoint with the two keys stripped from its configuration) trained on the numbers as they are:
// a model of today's deck (both true by default) refuses it, naming in one message both deck lines
// that resume it;
// a deck with both false loads it and trains on.
TEST(InsituCheckpointConfig, AnMlpCheckpointFromBeforeStandardisationNeedsItOff) {
  const Comm world;
  const std::string deck =
      "model mlp\nloss mse\nhidden_sizes 4\nbatch_size 4\nlr 0.01\nseed 3\ninput_width 2\n"
      "target_width 1\nbuffer_capacity 16\n";
  std::vector<float> x(16), y(8);
  for (int i = 0; i < 8; ++i) {
    x[2 * i] = 0.1f * static_cast<float>(i + world.rank());
    x[2 * i + 1] = -0.3f * static_cast<float>(i);
    y[i] = 2.0f + 0.5f * static_cast<float>(i);
  }
  insitu::InsituModel m("std", insitu::parse_insitu_deck(deck, "(deck text)"), world.raw());
  m.log().set_file(test::scratch("insitu_ckpt_std_log.txt"), false);
  m.push(x.data(), y.data(), 8, insitu::Order::row_major);
  m.train_session("t");
  const std::string both = " standardize_inputs=true standardize_targets=true";
  ASSERT_NE(m.model().config_string().find(both), std::string::npos) << m.model().config_string();
  const std::string dir = test::empty_scratch_dir(world, "insitu_ckpt_std");
  const std::string saved = m.save(dir);
  const std::string older = dir + "/older.h5";
  edited_copy(world, saved, older, [](const std::string& c) {
    return replaced(c, " standardize_inputs=true standardize_targets=true", "");
  });

  const std::string msg = load_refusal(m, older);
  EXPECT_NE(msg.find(older + ": holds another model (standardize_inputs: 'true' now, standardize_targets: 'true' "
                             "now; the checkpoint was written before standardize_inputs and standardize_targets "
                             "existed, when the run trained as `standardize_inputs false` and `standardize_targets "
                             "false`; set those lines in the deck to resume it as it ran)"),
            std::string::npos)
      << msg;

  insitu::InsituModel raw("raw",
                          insitu::parse_insitu_deck(deck + "standardize_inputs false\nstandardize_targets false\n",
                                                    "(deck text)"),
                          world.raw());
  raw.log().set_file(test::scratch("insitu_ckpt_raw_log.txt"), false);
  EXPECT_NO_THROW(raw.load(older));
  raw.push(x.data(), y.data(), 8, insitu::Order::row_major);
  EXPECT_NO_THROW(raw.train_session("t"));
  EXPECT_NE(raw.model().config_string().find(" standardize_inputs=false standardize_targets=false"),
            std::string::npos);
}
