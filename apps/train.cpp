// train: the SPMD driver. Every rank runs this; see README.md for usage. The program is where the
// families that run themselves join the network families (models/run_family.hpp): one line each.
#include "ensemble/train_ensemble.hpp"
#include "train/driver.hpp"
#include "train/gbdt_run.hpp"

int main(int argc, char** argv) {
  hpct::register_run_family(hpct::gbdt_run_family());       // gradient-boosted trees
  hpct::register_run_family(hpct::ensemble::run_family());  // members combined
  return hpct::train_main(argc, argv);
}
