// gbdt_train: runs gbdt::run() from a deck without the `train` driver, for perf/compare_gbdt.py and
// for trying decks before `model gbdt` is wired into `train` (then `train DECK` does the same).
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/gbdt.hpp"

namespace {

// The general keys gbdt::run reuses, as src/train/schema.cpp declares them.
hpct::deck::Schema schema() {
  hpct::deck::Schema s;
  s.section("run");
  s.add_choice("model", "gbdt", {"gbdt"}, "model family to train");
  s.add_int("seed", 42, 0, (1ll << 62), "seed of every random stream");
  s.add_string("output", "", "model file to write; empty: none");
  s.add_string("metrics_file", "", "JSON-lines metrics; empty: none");
  s.add_int("log_every", 50, 1, 1ll << 40, "rounds between progress lines");
  s.section("layout");
  s.add_int("nodes", 0, 0, 1 << 20, "expected node count (not checked by this tool)");
  s.add_int("ranks_per_node", 0, 0, 1 << 20, "expected MPI ranks per node (not checked by this tool)");
  s.section("data");
  s.add_required_string("data_file", "training data");
  s.add_string("inputs_dataset", "inputs", "HDF5 inputs dataset");
  s.add_string("targets_dataset", "targets", "HDF5 targets dataset");
  s.add_string("validation_file", "", "validation data");
  s.add_real("validation_fraction", 0.1, 0.0, 0.9, "hold-out fraction of data_file");
  hpct::gbdt::declare_keys(s);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const hpct::Comm comm;
    hpct::Log::set_rank(comm.rank());
    try {
      if (argc < 2) throw hpct::Error("usage: gbdt_train DECK [key=value ...]", hpct::ExitCode::bad_input);
      std::string text;
      comm.run_agreed([&] {
        if (comm.rank() != 0) return;
        std::ifstream in(argv[1]);
        if (!in) throw hpct::Error(std::string(argv[1]) + ": cannot open deck", hpct::ExitCode::bad_input);
        std::ostringstream ss;
        ss << in.rdbuf();
        text = ss.str();
      });
      comm.broadcast(text);
      std::vector<std::string> overrides(argv + 2, argv + argc);
      const hpct::deck::Deck deck = hpct::deck::Deck::parse(text, argv[1], schema(), overrides);
      code = hpct::gbdt::run(deck, comm);
    } catch (const hpct::Error& e) {
      if (comm.rank() == 0) std::fprintf(stderr, "gbdt_train: error: %s\n", e.what());
      code = static_cast<int>(e.code());
    }
  }
  MPI_Finalize();
  return code;
}
