// The `train` program's command line, deck reading, layout check and dispatch (see driver.hpp).
#include "train/driver.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "comm/error_exit.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/trace.hpp"
#include "models/run_family.hpp"
#include "nn/conv.hpp"
#include "train/output_paths.hpp"
#include "train/pass_loop.hpp"
#include "train/run_loop.hpp"
#include "train/trainer.hpp"

namespace hpct {

namespace {

const char* kUsage =
    "usage: train DECK [--set key=value ...]\n"
    "       train --help-deck      print every deck key with its type, default, range and doc\n"
    "       train --help-kokkos    print Kokkos's own options (--kokkos-*)\n"
    "       train --version\n"
    "Run under MPI: `mpirun -np 2 train DECK` or `srun train DECK`. Kokkos options (--kokkos-*)\n"
    "are passed through to Kokkos.\n";

struct CommandLine {
  std::string deck_path;
  std::vector<std::string> overrides;
  bool help = false, help_deck = false, help_kokkos = false, version = false;
};

CommandLine parse_command_line(int argc, char** argv) {
  CommandLine c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--kokkos-", 0) == 0) continue;
    if (a == "--help" || a == "-h") c.help = true;
    else if (a == "--help-deck") c.help_deck = true;
    else if (a == "--help-kokkos") c.help_kokkos = true;  // Runtime had Kokkos print it
    else if (a == "--version") c.version = true;
    else if (a == "--set") {
      if (i + 1 >= argc) throw Error("--set needs key=value\n" + std::string(kUsage), ExitCode::bad_input);
      c.overrides.push_back(argv[++i]);
    } else if (a.rfind("--set=", 0) == 0) c.overrides.push_back(a.substr(6));
    else if (!a.empty() && a[0] == '-') throw Error("unknown option " + a + "\n" + kUsage, ExitCode::bad_input);
    else if (c.deck_path.empty()) c.deck_path = a;
    else throw Error("more than one deck given (" + c.deck_path + ", " + a + ")", ExitCode::bad_input);
  }
  if (!c.help && !c.help_deck && !c.help_kokkos && !c.version && c.deck_path.empty())
    throw Error(std::string("no deck given\n") + kUsage, ExitCode::bad_input);
  return c;
}

// What a family that runs itself may ask of this program (models/run_family.hpp).
RunServices program_services(const Comm& comm) {
  RunServices s;
  s.read_deck = [&comm](const std::string& path) { return read_deck_text(comm, path); };
  s.parse_deck = [](const std::string& text, const std::string& path) {
    return deck::Deck::parse(text, path, full_schema());
  };
  s.train_network = [&comm](const deck::Deck& deck, std::shared_ptr<const Dataset> rows, const std::string& output,
                            Heartbeat* heartbeat) {
    NetworkTrainer trainer(deck, comm, std::move(rows), output);
    trainer.set_heartbeat(heartbeat);
    return trainer.run().stop_signal;
  };
  s.run_passes = [&comm](const deck::Deck& deck, PassWork& work, const PassCadence& cadence) {
    return run_passes(deck, comm, work, cadence);
  };
  return s;
}

}  // namespace

std::string read_deck_text(const Comm& comm, const std::string& path) {
  std::string text;
  std::string err;
  if (comm.rank() == 0) {
    std::error_code ec;
    std::ifstream in(path);
    // A directory opens as an empty stream: without this it reads as an empty deck.
    if (std::filesystem::is_directory(path, ec)) err = path + ": is a directory, not a deck file";
    else if (!in) err = path + ": cannot open deck";
    else {
      std::ostringstream s;
      s << in.rdbuf();
      text = s.str();
    }
  }
  // Only rank 0 touched the file, but the error is the job's: every rank raises the same message.
  comm.broadcast(err, 0);
  comm.agree(err, ExitCode::bad_input);
  comm.broadcast(text, 0);
  return text;
}

void check_layout(const deck::Deck& deck, const Topology& topo) {
  const long long nodes = deck.get_int("nodes");
  if (nodes > 0 && nodes != topo.nodes)
    deck.fail("nodes",
              strf("deck expects %lld node(s) but the job runs on %d (ranks: %d)", nodes, topo.nodes, topo.size));
  const long long rpn = deck.get_int("ranks_per_node");
  if (rpn > 0 && (rpn != topo.max_ranks_per_node || rpn * topo.nodes != topo.size))
    deck.fail("ranks_per_node", strf("deck expects %lld rank(s) per node but the job has %d rank(s) on %d node(s)",
                                     rpn, topo.size, topo.nodes));
}

int train_main(int argc, char** argv) {
  Runtime runtime(argc, argv);
  const Comm comm;
  const Topology& topo = runtime.topology();
  return run_ending_on_errors(comm, {"error: ", "internal error: ", ""}, [&]() -> int {
    CommandLine cl;
    comm.run_agreed([&] { cl = parse_command_line(argc, argv); });
    if (cl.help || cl.help_deck || cl.help_kokkos || cl.version) {
      if (cl.help) Log::info(kUsage);
      if (cl.version) Log::info(runtime.banner());
      if (cl.help_deck) Log::info(full_schema().help());
      return 0;
    }
    const deck::Schema schema = full_schema();
    const std::string text = read_deck_text(comm, cl.deck_path);
    deck::Deck deck;
    trace::FinishAtExit trace_at_exit;  // writes trace_file however the run ends
    std::string device_warning;
    comm.run_agreed([&] {
      deck = deck::Deck::parse(text, cl.deck_path, schema, cl.overrides);
      check_layout(deck, topo);
      const std::string device = runtime.device_error(deck.get_string("device"), &device_warning);
      if (!device.empty()) deck.fail("device", device);
      if (const std::string err = trace::start(deck.get_string("trace_file"), comm.rank()); !err.empty())
        deck.fail("trace_file", err);
      if (const RunFamily* family = find_run_family(deck.get_string("model")))
        refuse_epoch_keys(deck, family->name);
    });

    // One line for the whole job: every rank of a node without a GPU has the same warning.
    if (!device_warning.empty() && comm.rank() == 0) std::fprintf(stderr, "%s\n", device_warning.c_str());
    Log::info(runtime.banner());
    Log::info(nn::math_libraries_line());
    const std::string affinity = runtime.affinity_warning();
    if (!affinity.empty()) Log::rank_error(affinity);
    Log::info("  deck " + cl.deck_path);
    prepare_output_paths(deck, comm);
    trace::Scope run_trace("run");
    // Note [guard before the open]: the heartbeat watches the data's open too.
    RunGuard guard(comm, deck.get_real("watchdog_timeout"));
    // A family that runs itself (trees, ensembles) takes the deck; the network families train here.
    if (const RunFamily* family = find_run_family(deck.get_string("model")))
      return family->run(deck, comm, program_services(comm));
    return run_network_training(deck, comm);
  });
}

}  // namespace hpct
