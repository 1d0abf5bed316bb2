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

}  // namespace hpct
