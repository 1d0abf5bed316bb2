// The families that run themselves, as the program registered them (see run_family.hpp).
#include "models/run_family.hpp"

#include "core/error.hpp"

namespace hpct {

namespace {
std::vector<RunFamily>& registered_run_families() {
  static std::vector<RunFamily> families;
  return families;
}
}  // namespace

const std::vector<RunFamily>& run_families() { return registered_run_families(); }

void register_run_family(const RunFamily& family) {
  if (find_run_family(family.name)) throw Error(std::string("internal: run family '") + family.name + "' twice");
  registered_run_families().push_back(family);
}

const RunFamily* find_run_family(const std::string& name) {
  for (const RunFamily& f : registered_run_families())
    if (name == f.name) return &f;
  return nullptr;
}

void refuse_epoch_keys(const deck::Deck& deck, const std::string& family) {
  if (!deck.get_string("best_output").empty())
    deck.fail("best_output", "model " + family +
                                 " trains no epochs with a validation loss to choose from; best_output is for the "
                                 "network families");
  if (deck.schema().find("early_stopping_patience") && deck.get_int("early_stopping_patience") > 0)
    deck.fail("early_stopping_patience",
              "model " + family + " trains no epochs; early_stopping_patience is for the " + "network families" +
                  (family == "gbdt" ? " (gbdt: early_stopping_rounds)" : ""));
  if (deck.schema().find("lr_schedule") && deck.get_string("lr_schedule") == "plateau")
    deck.fail("lr_schedule",
              "model " + family + " trains no epochs; lr_schedule plateau is for the network families");
}

}  // namespace hpct
