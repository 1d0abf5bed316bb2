// A booster in a state-only checkpoint and back (see gbdt_checkpoint.hpp).
#include "train/gbdt_checkpoint.hpp"

#include "core/error.hpp"
#include "gbdt/booster_state.hpp"
#include "gbdt/gbdt.hpp"

namespace hpct {

CheckpointState gbdt_checkpoint_state(const deck::Deck& deck, const gbdt::Model& model, int rounds, int best_round,
                                      double best, int ranks) {
  CheckpointState st = run_state(deck, ranks);
  st.global_step = static_cast<std::uint64_t>(rounds);
  st.extra = gbdt::booster_arrays(model, rounds, best_round, best);
  return st;
}

gbdt::BoostResume gbdt_resume_state(const CheckpointState& st, const std::string& path, int num_features,
                                    int num_outputs) {
  if (st.model_family != gbdt::kFamilyName)
    throw Error(path + ": is a checkpoint of a '" + st.model_family + "' network, not of a gbdt booster",
                ExitCode::bad_input);
  return gbdt::booster_from_arrays(st.extra, path, num_features, num_outputs);
}

}  // namespace hpct
