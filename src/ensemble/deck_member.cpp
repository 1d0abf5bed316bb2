// Ensemble member decks and the rows their trainings see (see deck_member.hpp).
#include "ensemble/deck_member.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/memory_table.hpp"
#include "data/weighted_rows.hpp"
#include "gbdt/gbdt.hpp"
#include "gbdt/model_io.hpp"
#include "gbdt/table_encoding.hpp"

namespace hpct::ensemble {

gbdt::Data kept_rows(const gbdt::Data& d, const std::vector<char>& keep, const Comm& comm) {
  gbdt::Data s;
  s.name = "train";
  s.file = d.file;
  s.cols = d.cols;
  s.classes = d.classes;        // a tree member's model file keeps the class names
  s.categories = d.categories;  // categorical splits for trees, one-hot / embedding inputs for networks
  s.feature_names = d.feature_names;
  s.label = d.label;
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

std::shared_ptr<const Dataset> rows_in_memory(const gbdt::Data& s, const std::string& name,
                                              const deck::Deck& member, const std::string& hdf5_dataset,
                                              const std::string& whose, const Comm& comm) {
  std::vector<float> x = comm.gather_to_root(s.x), y = comm.gather_to_root(s.y);
  auto n = static_cast<std::uint64_t>(y.size());
  comm.broadcast(&n, 1, 0);
  x.resize(n * static_cast<std::uint64_t>(s.cols));
  y.resize(n);
  comm.broadcast(x.data(), x.size(), 0);
  comm.broadcast(y.data(), y.size(), 0);
  RowOrigin origin{s.file, hdf5_dataset, whose, comm.gather_to_root(s.line)};
  origin.line.resize(n);
  comm.broadcast(origin.line.data(), origin.line.size(), 0);
  // gbdt::load_data keeps an Inf as +-FLT_MAX (the trees' reading): the network gets it back, so
  // that its training refuses it as `model mlp` does (Note [member non-finite inputs]).
  for (float& v : x)
    if (std::fabs(v) == std::numeric_limits<float>::max())
      v = std::copysign(std::numeric_limits<float>::infinity(), v);
  // Note [ensemble row weights]: a network member trains on its rows' weights (Note [network row
  // weights] in train/row_weights.cpp), as a tree member does.
  std::vector<float> w;
  if (comm.max(s.w.empty() ? 0 : 1) == 1) {
    w = comm.gather_to_root(s.w);
    w.resize(n);
    comm.broadcast(w.data(), w.size(), 0);
  }
  // Always a table's rows (an encoding even without categories): the mlp then knows them for a table's,
  // whose NaN are missing cells (Note [mlp standardisation] in models/mlp/mlp_scaling.cpp).
  TableEncoding e;
  e.columns = s.feature_names;
  e.cols = s.cols;
  e.categories = s.categories;
  e.classes = s.classes;
  if (s.categories.any())
    comm.run_agreed([&] { choose_category_inputs(e, category_inputs(member), s.file, comm.rank() == 0); });
  std::shared_ptr<const Dataset> rows = std::make_shared<EncodedMemoryTable>(name, x, std::move(y), 1, std::move(e),
                                                                             std::move(origin));
  return w.empty() ? rows : with_row_weights(std::move(rows), nullptr, std::move(w));
}

std::string MemberDeck::name() const { return std::filesystem::path(path).stem().string(); }

MemberDeck read_member_deck(const std::string& path, Task task, const Comm& comm, const RunServices& services) {
  MemberDeck m;
  m.path = path;
  m.text = services.read_deck(path);
  comm.run_agreed([&] {
    m.deck = services.parse_deck(m.text, path);
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
                                                   : gbdt::predicts_amount(p.objective);
      if (!fits || p.objective == gbdt::Objective::lambdarank)  // scores of a query, no amount
        m.deck.fail("objective", "objective " + gbdt::objective_name(p.objective) + " cannot be a member of a " +
                                     task_name(task) + " ensemble");
      if (p.early_stopping_rounds > 0)
        m.deck.fail("early_stopping_rounds", "ensemble members train without a validation set; set it to 0");
      refuse_epoch_keys(m.deck, model);  // as a `model gbdt` run does, rather than ignoring it
    } else if (m.deck.schema().find("best_output") && !m.deck.get_string("best_output").empty()) {
      m.deck.fail("best_output",
                  "ensemble members train without a validation set, so no epoch is the best: "
                  "leave best_output out of a member deck");
    } else if (m.deck.schema().find("early_stopping_patience") && m.deck.get_int("early_stopping_patience") > 0) {
      m.deck.fail("early_stopping_patience", "ensemble members train without a validation set; set it to 0");
    } else if (m.deck.schema().find("lr_schedule") && m.deck.get_string("lr_schedule") == "plateau") {
      m.deck.fail("lr_schedule",
                  "plateau watches the validation loss, and ensemble members train without a validation set");
    }
  });
  return m;
}

void settle_member_classes(MemberDeck& m, Task task, int K, const std::string& of, const Comm& comm,
                           const RunServices& services) {
  if (task == Task::regression) return;
  comm.run_agreed([&] {
    const std::string key = m.trees ? "num_class" : "num_classes";
    // A tree's num_class is multiclass only; a network's num_classes counts cross_entropy's outputs.
    const bool counts = m.trees ? task == Task::multiclass
                                : m.deck.schema().find(key) && m.deck.get_string("loss") == "cross_entropy";
    const int want = task == Task::binary ? 2 : K;
    if (counts && m.deck.is_set(key) && m.deck.get_int(key) != want)
      m.deck.fail(key, strf("the ensemble has %d classes (%s): set %s %d or leave it out", want, of.c_str(),
                            key.c_str(), want));
    if (counts && !m.trees && !m.deck.is_set(key))  // appended: the deck's own lines keep their numbers
      m.deck = services.parse_deck(m.text + strf("\nnum_classes %d\n", want), m.path);
  });
}

gbdt::BoostParams member_params(const MemberDeck& m, Task task, int num_class) {
  gbdt::BoostParams p = gbdt::params_from_deck(m.deck);
  if (task == Task::multiclass && p.num_class <= 0) p.num_class = num_class;
  return p;
}

void check_member_labels(const MemberDeck& m, Task task, int num_class, const gbdt::Data& train,
                         const std::string& part, const Comm& comm) {
  if (!m.trees) return;
  const gbdt::BoostParams p = member_params(m, task, num_class);
  comm.run_agreed([&] {
    gbdt::check_labels(p.objective, p.num_class, train.y, train.line, train.file, p.objective_params,
                       part + ", which member " + m.path + " trains on");
  });
}

}  // namespace hpct::ensemble
