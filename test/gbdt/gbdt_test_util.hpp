// Helpers shared by the GBDT tests: a schema with the general keys the trainer reuses plus the gbdt
// keys, the shared data folder, and per-test input files written by rank 0.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <sys/stat.h>
#include <fstream>
#include <string>

#include "comm/comm.hpp"
#include "core/error.hpp"
#include "data/source_registry.hpp"
#include "deck/deck.hpp"
#include "gbdt/data.hpp"
#include "gbdt/gbdt.hpp"
#include "gbdt/objective.hpp"
#include "test_paths.hpp"

namespace gbdt_test {

// The general keys as the driver declares them (src/train/full_schema.cpp), without depending on it.
inline hpct::deck::Schema schema() {
  hpct::deck::Schema s;
  s.add_choice("model", "gbdt", {"mlp", "gbdt"}, "model family");
  s.add_int("seed", 42, 0, (1ll << 62), "seed");
  s.add_string("output", "", "model file");
  s.add_string("metrics_file", "", "metrics file");
  s.add_int("log_every", 50, 1, 1ll << 40, "log cadence");
  s.add_required_string("data_file", "training data");
  s.add_string("validation_file", "", "validation data");
  hpct::declare_data_source_keys(s);  // data_format, inputs_dataset, targets_dataset, ...
  s.add_real("validation_fraction", 0.1, 0.0, 0.9, "hold-out fraction");
  hpct::gbdt::declare_keys(s);
  return s;
}

inline hpct::deck::Deck deck(const std::string& text) {
  static const hpct::deck::Schema s = schema();
  return hpct::deck::Deck::parse(text, "test.in", s);
}

// LightGBM's and XGBoost's example sets ship in the repository (examples/data, with their licences).
inline std::string data_dir() { return hpct::test::source_dir() + "/examples/data"; }
inline bool have(const std::string& rel) {
  struct stat st;
  return ::stat((data_dir() + "/" + rel).c_str(), &st) == 0;
}
// A missing example file is a broken checkout, not a reason to skip.
#define GBDT_REQUIRE_DATA(rel) \
  ASSERT_TRUE(gbdt_test::have(rel)) << "example data set " << gbdt_test::data_dir() << "/" << rel << " is missing"

// Rank 0 writes `text` to `name` in the working directory; every rank returns after it exists.
inline std::string write_file(const std::string& name, const std::string& text) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::ofstream(name, std::ios::binary) << text;
  MPI_Barrier(MPI_COMM_WORLD);
  return name;
}

// Loads `text` as file `name` through the trainer's path (deck keys `extra`) and returns the error
// message every rank agreed on, "" when none; an error must be bad input (exit code 2).
inline std::string load_error(const std::string& name, const std::string& text, const std::string& extra) {
  const std::string file = write_file(name, text);
  const hpct::Comm comm;
  try {
    const auto d = deck("data_file " + file + "\n" + extra);
    const hpct::gbdt::BoostParams p = hpct::gbdt::params_from_deck(d);
    hpct::gbdt::Data data = hpct::gbdt::load_data(d, "data_file", "train", comm);
    comm.run_agreed([&] {
      hpct::gbdt::check_labels(p.objective, p.num_class, data.y, data.line, data.file, p.objective_params);
    });
  } catch (const hpct::Error& e) {
    EXPECT_EQ(e.code(), hpct::ExitCode::bad_input) << e.what();
    return e.what();
  }
  return "";
}

}  // namespace gbdt_test
