// The general keys (run, layout, data) and the composition of every module's keys into one schema.
#include "data/source_registry.hpp"
#include "models/registry.hpp"
#include "models/run_family.hpp"
#include "train/config.hpp"
#include "train/driver.hpp"

namespace hpct {

deck::Schema full_schema() {
  deck::Schema s;
  s.section("run");
  std::vector<std::string> families;
  std::string doc = "model family to train (networks: see the registry's families below";
  for (const ModelFamily& f : model_families()) families.push_back(f.name);
  for (const RunFamily& f : run_families()) {  // the families that run themselves (trees, ensembles)
    families.push_back(f.name);
    doc += std::string("; ") + f.name + ": " + f.summary;
  }
  // The default is the registry's first family.
  s.add_choice("model", families.front(), families, doc + ")");
  s.add_choice("device", "auto", {"auto", "gpu", "cpu"},
               "where kernels run: auto = the node-local rank's GPU on GPU builds, the host CPUs when no "
               "GPU is visible (one warning); gpu = a GPU or an error; cpu = the host build");
  s.add_int("seed", 42, 0, (1ll << 62), "seed of every random stream (init, shuffle, noise)");
  s.add_string("output", "", "file the trained model is written to (HDF5 for networks); empty: none");
  s.add_string("best_output", "",
               "networks with a validation split: weights file of the epoch with the lowest validation loss "
               "(ties: the earlier epoch), rewritten whenever it improves; empty: none");
  s.add_string("metrics_file", "", "JSON-lines file with step, epoch and summary metrics; empty: none");
  s.add_string("tensorboard_dir", "",
               "directory of TensorBoard event files (rank 0; the metrics_file values); "
               "empty: none");
  s.add_string("trace_file", "",
               "per-rank timeline of the training phases in Chrome trace-event JSON (Perfetto); "
               "%r in the name is the rank, else .rank<r> goes before the extension; empty: none");
  s.add_int("log_every", 50, 1, 1ll << 40, "optimizer steps between progress lines");

  s.section("layout");
  s.add_int("nodes", 0, 0, 1 << 20, "expected node count, checked against the job (0: any)");
  s.add_int("ranks_per_node", 0, 0, 1 << 20, "expected MPI ranks per node, checked (0: any)");

  s.section("data");
  s.add_required_string("data_file",
                        "training data (see data_format; e.g. HDF5 with inputs [N, d_in] and targets [N, d_out]; "
                        "netcdf, zarr and grib: several files, comma-separated paths or glob patterns, read as "
                        "one)");
  s.add_string("validation_file", "", "validation data (same format and fields); empty: split data_file");
  declare_data_source_keys(s);
  s.add_real("validation_fraction", 0.1, 0.0, 0.9,
             "without validation_file: the last fraction of data_file's rows is held out");
  s.add_choice("data_cache", "auto", {"auto", "memory", "stream"},
               "memory: read the training part once and permute it in memory each epoch; stream: read each "
               "epoch's rows from the file; auto: memory when the part fits data_cache_mb");
  s.add_int("data_cache_mb", 2048, 0, 1ll << 40,
            "MiB per rank (device memory on GPUs) data_cache auto may hold; every rank holds the whole part");
  s.add_bool("prefetch_epoch", true,
             "when streaming, a loader thread reads the next epoch's rows while this epoch trains");

  declare_network_keys(s);
  for (const RunFamily& f : run_families()) f.declare_keys(s);
  return s;
}

}  // namespace hpct
