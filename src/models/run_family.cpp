// The families that run themselves, as the program registered them (see run_family.hpp).
#include "models/run_family.hpp"

#include "core/error.hpp"

namespace hpct {

namespace {
std::vector<RunFamily>& registered() {
  static std::vector<RunFamily> families;
  return families;
}
}  // namespace

const std::vector<RunFamily>& run_families() { return registered(); }

void register_run_family(const RunFamily& family) {
  if (find_run_family(family.name)) throw Error(std::string("internal: run family '") + family.name + "' twice");
  registered().push_back(family);
}

const RunFamily* find_run_family(const std::string& name) {
  for (const RunFamily& f : registered())
    if (name == f.name) return &f;
  return nullptr;
}

void refuse_best_output(const deck::Deck& deck, const std::string& family) {
  if (deck.get_string("best_output").empty()) return;
  deck.fail("best_output", "model " + family +
                               " trains no epochs with a validation loss to choose from; best_output is for the "
                               "network families");
}

}  // namespace hpct
