// The general keys (run, layout, data) and the composition of every module's keys into one schema.
#include "gbdt/gbdt.hpp"
#include "train/driver.hpp"
#include "train/trainer.hpp"

namespace hpct {

deck::Schema full_schema() {
  deck::Schema s;
  s.section("run");
  s.add_choice("model", "mlp", {"mlp", "diffusion", "gbdt"}, "model family to train");
  s.add_choice("device", "auto", {"auto", "gpu", "cpu"},
               "where kernels run: auto = the node-local rank's GPU on GPU builds, the host CPUs when no "
               "GPU is visible (one warning); gpu = a GPU or an error; cpu = the host build");
  s.add_int("seed", 42, 0, (1ll << 62), "seed of every random stream (init, shuffle, noise)");
  s.add_string("output", "", "file the trained model is written to (HDF5 for networks); empty: none");
  s.add_string("metrics_file", "", "JSON-lines file with step, epoch and summary metrics; empty: none");
  s.add_int("log_every", 50, 1, 1ll << 40, "optimizer steps between progress lines");

  s.section("layout");
  s.add_int("nodes", 0, 0, 1 << 20, "expected node count, checked against the job (0: any)");
  s.add_int("ranks_per_node", 0, 0, 1 << 20, "expected MPI ranks per node, checked (0: any)");

  s.section("data");
  s.add_required_string("data_file", "training data (HDF5 with inputs [N, d_in] and targets [N, d_out])");
  s.add_string("inputs_dataset", "inputs", "name of the inputs dataset in data_file");
  s.add_string("targets_dataset", "targets", "name of the targets dataset in data_file");
  s.add_string("validation_file", "", "validation data (same dataset names); empty: split data_file");
  s.add_real("validation_fraction", 0.1, 0.0, 0.9,
             "without validation_file: the last fraction of data_file's rows is held out");

  declare_network_keys(s);
  gbdt::declare_keys(s);
  return s;
}

}  // namespace hpct
