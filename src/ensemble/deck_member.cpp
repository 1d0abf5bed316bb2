// Training ensemble members from their decks (see deck_member.hpp).
#include "ensemble/deck_member.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/gbdt.hpp"
#include "gbdt/model_io.hpp"
#include "io/hdf5.hpp"
#include "train/driver.hpp"
#include "train/trainer.hpp"

namespace hpct::ensemble {

namespace {

// The kept rows of d as a data set of their own, with global indices counted over the ranks in
// rank order (the boosting's random streams are keyed by them, so the member is the same for any
// rank count).
gbdt::Data subset(const gbdt::Data& d, const std::vector<char>& keep, const Comm& comm) {
  gbdt::Data s;
  s.name = "train";
  s.file = d.file;
  s.cols = d.cols;
  for (long long i = 0; i < d.rows; ++i) {
    if (!keep[static_cast<std::size_t>(i)]) continue;
    s.x.insert(s.x.end(), d.x.begin() + i * d.cols, d.x.begin() + (i + 1) * d.cols);
    s.y.push_back(d.y[static_cast<std::size_t>(i)]);
    if (!d.w.empty()) s.w.push_back(d.w[static_cast<std::size_t>(i)]);
    s.line.push_back(d.line.empty() ? 0 : d.line[static_cast<std::size_t>(i)]);
  }
  s.rows = static_cast<long long>(s.y.size());
  const std::vector<long long> counts = comm.allgather(s.rows);
  for (int r = 0; r < comm.rank(); ++r) s.first_row += counts[static_cast<std::size_t>(r)];
  for (const long long c : counts) s.global_rows += c;
  return s;
}

// Rank 0 writes the rows as HDF5 inputs [n, F] and targets [n] (what the network trainer reads).
void write_rows(const gbdt::Data& s, const std::string& path, const Comm& comm) {
  const std::vector<float> x = comm.gather_to_root(s.x), y = comm.gather_to_root(s.y);
  comm.run_agreed([&] {
    if (comm.rank() != 0) return;
    const h5::File f = h5::File::create(path);
    const auto n = static_cast<std::uint64_t>(y.size()), cols = static_cast<std::uint64_t>(s.cols);
    h5::write(f, "inputs", {n, cols}, x.data());
    h5::write(f, "targets", {n}, y.data());
  });
}

}  // namespace

std::string MemberDeck::name() const { return std::filesystem::path(path).stem().string(); }

MemberDeck read_member_deck(const std::string& path, Task task, const Comm& comm) {
  MemberDeck m;
  m.path = path;
  m.text = read_deck_text(comm, path);
  comm.run_agreed([&] {
    m.deck = deck::Deck::parse(m.text, path, full_schema());
    const std::string model = m.deck.get_string("model");
    if (model == "ensemble") m.deck.fail("model", "an ensemble cannot be a member of an ensemble");
    m.trees = model == "gbdt";
    // A network's loss decides what it predicts; refusing a wrong one here saves training a fold
    // before load_member would say so (`loss` is the general key every network family reads).
    const std::string loss = m.trees ? "" : m.deck.get_string("loss");
    if (task == Task::binary && loss == "mse")
      m.deck.fail("loss", "a binary ensemble member predicts P(y = 1): train it with loss bce (or cross_entropy)");
    if (task == Task::regression && !m.trees && loss != "mse")
      m.deck.fail("loss", "a regression ensemble member predicts the value: train it with loss mse");
    if (task == Task::multiclass && !m.trees && loss != "cross_entropy")
      m.deck.fail("loss",
                  "a multiclass ensemble member predicts class probabilities: train it with loss "
                  "cross_entropy");
    if (m.trees) {
      const gbdt::BoostParams p = gbdt::params_from_deck(m.deck);
      const bool fits = task == Task::binary       ? p.objective == gbdt::Objective::binary
                        : task == Task::multiclass ? p.objective == gbdt::Objective::multiclass
                                                   : p.objective == gbdt::Objective::regression;
      if (!fits)
        m.deck.fail("objective", "objective " + gbdt::objective_name(p.objective) + " cannot be a member of a " +
                                     task_name(task) + " ensemble");
      if (p.early_stopping_rounds > 0)
        m.deck.fail("early_stopping_rounds", "ensemble members train without a validation set; set it to 0");
    }
  });
  return m;
}

Member train_member_deck(const MemberDeck& m, Task task, const gbdt::Data& d, const std::vector<char>& keep,
                         const std::string& output, const std::string& work, const Comm& comm, int num_class) {
  const gbdt::Data s = subset(d, keep, comm);
  if (m.trees) {
    gbdt::BoostParams p = gbdt::params_from_deck(m.deck);
    // Every fold predicts the ensemble's classes, even one whose rows lack the highest label.
    if (task == Task::multiclass && p.num_class <= 0) p.num_class = num_class;
    gbdt::Model model = gbdt::train(p, s, {}, comm).model;
    comm.run_agreed([&] {
      if (comm.rank() == 0) gbdt::write_file_atomic(output, gbdt::to_json(model));
    });
    return gbdt_member(std::move(model), output, task);
  }
  const std::string rows = (std::filesystem::path(work) / (m.name() + ".rows.h5")).string();
  write_rows(s, rows, comm);
  // The ensemble decides the data and where the member goes; the member deck keeps the rest.
  const std::vector<std::string> overrides = {
      "data_file=" + rows, "data_format=hdf5",      "inputs_dataset=inputs", "targets_dataset=targets",
      "validation_file=",  "validation_fraction=0", "output=" + output,      "metrics_file=",
      "tensorboard_dir=",  "trace_file=",           "checkpoint_dir=",       "resume=none",
      "nodes=0",           "ranks_per_node=0"};
  deck::Deck member;
  comm.run_agreed([&] { member = deck::Deck::parse(m.text, m.path, full_schema(), overrides); });
  {
    NetworkTrainer trainer(member, comm);
    trainer.run();
  }
  Member loaded;
  comm.run_agreed([&] { loaded = load_member(output, task); });
  return loaded;
}

}  // namespace hpct::ensemble
