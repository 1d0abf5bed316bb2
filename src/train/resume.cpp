// Choosing the checkpoint to resume from and checking the new deck against it (see resume.hpp).
#include "train/resume.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "models/registry.hpp"
#include "models/run_family.hpp"

namespace hpct {

std::string choose_checkpoint(const deck::Deck& deck, const Comm& comm) {
  const std::string& mode = deck.get_string("resume");
  if (mode == "none") return {};
  std::string chosen, err;
  if (comm.rank() == 0) {
    try {
      if (mode != "auto") {
        inspect_checkpoint(mode);  // throws with the reason when unusable
        chosen = mode;
      } else {
        const std::string& dir = deck.get_string("checkpoint_dir");
        if (dir.empty()) deck.fail("resume", "`resume auto` needs checkpoint_dir");
        for (const std::string& candidate : checkpoint_candidates(dir)) {
          try {
            inspect_checkpoint(candidate);
            chosen = candidate;
            break;
          } catch (const Error& e) {
            Log::info(std::string("resume: skipping unusable checkpoint: ") + e.what());
          }
        }
        if (chosen.empty()) Log::info("resume: no valid checkpoint in " + dir + ", starting fresh");
      }
    } catch (const Error& e) {
      err = e.what();
    }
  }
  comm.broadcast(err, 0);
  comm.agree(err, ExitCode::bad_input);
  comm.broadcast(chosen, 0);
  return chosen;
}

namespace {
struct Resolved {
  std::string value;
  bool by_default = false;  // the origin "default": the deck did not set it
};
// key -> value of a resolved deck ("key value   # origin" lines; values may be empty).
std::map<std::string, Resolved> resolved_values(const std::string& text) {
  std::map<std::string, Resolved> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find("   #");
    const bool by_default = hash != std::string::npos && line.substr(hash + 4) == " default";
    if (hash != std::string::npos) line = line.substr(0, hash);
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] = Resolved{line.substr(space + 1), by_default};
  }
  return out;
}

// Note [keys newer than the checkpoint]: a key the checkpoint's deck lacks was added after the
// checkpoint was written, and that run ran as the key's value "before it existed". For most keys
// that is the default (a new option, off), so the deck's value holds. Where the default is not what
// the run did (model mlp's standardize_inputs and standardize_targets, on by default since they
// came: the run before them trained on the numbers as they are), resuming by default would train
// the old weights on standardised numbers, another model; as for Note [defaults changed since the
// checkpoint], the refusal names the line that resumes the run as it ran. The checkpoint's family
// lists such keys with their value from before (ModelFamily::keys_added_later), the table the
// in-situ library's checkpoints and the rebuilding of old weights files read too (Note [keys added
// later] in models/registry.cpp). Every such key the deck lacks is named in one refusal (the mlp's
// mse checkpoint needs both lines): asked one at a time, a user learnt of the second only after
// fixing the first.
using KeyValues = std::vector<std::pair<std::string, std::string>>;

// The keys newer than the checkpoint that the deck must set to resume the run as it ran, with the
// value the run had (none: empty). Only for a deck of the checkpoint's model: another model is
// refused as such by check_resume_deck.
KeyValues newer_keys_to_set(const deck::Deck& deck, const std::map<std::string, Resolved>& old) {
  KeyValues keys;
  const auto model = old.find("model");
  if (model == old.end() || model->second.value != deck.get_string("model")) return keys;
  const ModelFamily* family = find_model_family(model->second.value);
  if (!family) return keys;
  for (const auto& [key, before] : family->keys_added_later)
    if (deck.schema().find(key) && !old.count(key) && !key_added_later_refusal(*family, deck, key).empty())
      keys.emplace_back(key, before);
  return keys;
}

[[noreturn]] void refuse_newer_keys(const deck::Deck& deck, const KeyValues& keys) {
  deck.fail(keys.front().first,
            keys_added_later_refusal(keys) + ", or start a new run with `resume none` or another checkpoint_dir");
}
}  // namespace

void check_resume_deck(const deck::Deck& deck, const CheckpointState& state) {
  // Model shape, loss, optimizer kind, the seed (which fixes the sample order and noise) and how a
  // LibSVM file's entries read (the trees so far saw them one way; the model file keeps libsvm_absent).
  static const std::set<std::string> fixed_keys = {"model",           "seed",
                                                   "optimizer",       "loss",
                                                   "shuffle",         "inputs_dataset",
                                                   "targets_dataset", "libsvm_base",
                                                   "libsvm_absent"};
  const auto old = resolved_values(state.deck);
  // Note [keys newer than the checkpoint]: all the lines to set, in one message.
  const KeyValues newer = newer_keys_to_set(deck, old);
  if (!newer.empty()) refuse_newer_keys(deck, newer);
  const RunFamily* run = find_run_family(deck.get_string("model"));
  for (const auto& key : deck.schema().keys()) {
    const auto it = old.find(key.name);
    if (it == old.end())
      continue;  // a key newer than the checkpoint: its default applies (those that must not: above)
    const std::string& before = it->second.value;
    const std::string& now = deck.get_string(key.name);
    if (before == now || key.name == "resume") continue;
    // A family that runs itself (trees: every key shapes the trees but the number of rounds and the
    // test set) says which keys of its own section may change.
    const bool own_fixed = run && key.section == run->name &&
                           std::find(run->resume_free_keys.begin(), run->resume_free_keys.end(), key.name) ==
                               run->resume_free_keys.end();
    const bool fixed = fixed_keys.count(key.name) || key.section.rfind("model", 0) == 0 || own_fixed;
    // Note [defaults changed since the checkpoint]: neither deck set the key, the default moved
    // (conv_algorithm: gemm, then library). The checkpoint's run continues only as it ran, so the
    // message names the line that says so rather than blaming a deck that did not change.
    if (fixed && it->second.by_default && !deck.is_set(key.name))
      deck.fail(key.name, "cannot change on resume: the checkpoint ran the default of its version, '" +
                              clip_for_log(before) + "', and this version's default is '" + clip_for_log(now) +
                              "'; set `" + key.name + " " + clip_for_log(before) +
                              "` in the deck to resume it as it ran, or start a new run with `resume none` or "
                              "another checkpoint_dir");
    if (fixed)
      deck.fail(key.name, "cannot change on resume (the checkpoint has '" + clip_for_log(before) + "', this run '" +
                              clip_for_log(now) +
                              "'); start a new run with `resume none` or another checkpoint_dir");
    Log::info("resume: " + key.name + " changed from '" + clip_for_log(before) + "' to '" + clip_for_log(now) +
              "'");
  }
}

ResumePoint resume_point(const std::string& path, const CheckpointState& st, std::uint64_t epoch_size,
                         std::uint64_t global_batch) {
  ResumePoint p;
  if (st.epoch_samples >= epoch_size) {
    p.epoch = st.epoch + 1;
    return p;
  }
  if (st.epoch_samples % global_batch != 0)
    throw Error(strf("%s: resume at sample %llu of epoch %llu needs a global batch that divides it; "
                     "batch_size x ranks x accumulation_steps = %llu does not",
                     path.c_str(), (unsigned long long)st.epoch_samples, (unsigned long long)st.epoch + 1,
                     (unsigned long long)global_batch),
                ExitCode::bad_input);
  p.epoch = st.epoch;
  p.step = st.epoch_samples / global_batch;
  p.epoch_loss_sum = st.epoch_loss_sum;
  p.epoch_loss_count = st.epoch_steps;
  return p;
}

}  // namespace hpct
