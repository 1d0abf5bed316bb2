// Row and class weights for networks: the deck keys, weight files and balanced class weights
// counted over ranks (see row_weights.hpp; the weights field's data set: data/weighted_rows.hpp).
#include "train/row_weights.hpp"

#include <cmath>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "io/text_tables.hpp"

namespace hpct {

// Note [network row weights]
// A network weighs rows as PyTorch's `(w * loss(out, y, reduction="none")).mean()` and Keras's
// sample_weight do: the step's loss is sum_i w_i l_i / B over the B rows of the global batch, so
// the normaliser stays the sample count of the step (nn/loss.hpp), no extra collective is needed,
// N ranks give 1 rank's step, and weights all 1 give the unweighted loss and gradients bit for bit
// (x 1 is exact). A weight scales its row's contribution; it does not renormalise the batch: a batch
// of small weights takes a small step, as in PyTorch. Validation reports sum w l / sum w (and
// weighted accuracy, RMSE), the trees' weighted metrics (docs/gbdt.md), which early stopping,
// plateau and best_output watch. Class weights (class_weights) multiply the row weight by c[class]:
// PyTorch's CrossEntropyLoss(weight=c) in validation, where its mean divides by sum w too, and the
// row idiom above in training (the step divides by B, not by sum w: a weight applies the same
// whatever its batch holds). The weights travel with the rows as a field "weights" [1], so the
// shard, the sampler, rank_invariant and the validation blocks treat them as any other field
// (data/weighted_rows.hpp); an ensemble's network member gets its part's weights the same way.

namespace {

std::string deck_string(const deck::Deck& deck, const char* key) {
  return deck.schema().find(key) ? deck.get_string(key) : std::string();
}

}  // namespace

void declare_row_weight_keys(deck::Schema& s) {
  s.add_string("class_weights", "",
               "networks, cross_entropy and bce (one output): weights of the classes, multiplying each row's "
               "weight "
               "(docs/row_weights.md): balanced (n_rows / (classes x rows of the class), scikit-learn's) or a "
               "comma list, one number >= 0 per class in class order; empty: none");
}

std::string row_weight_key(const deck::Deck& deck) {
  for (const char* key : {"weight_column", "weight_file", "validation_weight_file", "class_weights"})
    if (!deck_string(deck, key).empty()) return key;
  return "";
}

std::vector<float> choose_class_weights(const deck::Deck& deck, const Dataset& train, int classes,
                                        const std::vector<std::string>& names, const Comm& comm) {
  const std::string text = deck_string(deck, "class_weights");
  if (text.empty()) return {};
  const auto name = [&](int k) {
    return k < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(k)] : std::to_string(k);
  };
  std::vector<float> c;
  std::vector<double> count(static_cast<std::size_t>(classes), 0.0);
  comm.run_agreed([&] {
    const std::string loss = deck.get_string("loss");
    if (loss != "cross_entropy" && loss != "bce")
      deck.fail("class_weights", "weighs the classes of loss cross_entropy or bce, not loss " + loss);
    if (classes < 2)
      deck.fail("class_weights", loss + " here has no classes to weigh (bce: one target column of 0 and 1)");
    if (text == "balanced") {  // this rank's block of the training rows, counted by class
      const std::vector<FieldSpec> f = train.fields();
      const std::uint64_t first = train.rows() * static_cast<std::uint64_t>(comm.rank()) / comm.size();
      const std::uint64_t n = train.rows() * static_cast<std::uint64_t>(comm.rank() + 1) / comm.size() - first;
      std::vector<std::vector<std::uint32_t>> words(f.size());
      std::vector<FieldBuffer> out(f.size());
      int targets = -1;
      for (std::size_t i = 0; i < f.size(); ++i) {
        words[i].resize(std::max<std::uint64_t>(n * f[i].words(), 1));
        out[i].values = words[i].data();
        if (f[i].name == "targets") targets = static_cast<int>(i);
      }
      if (n > 0) train.read_block(first, n, out);
      const FieldSpec& t = f.at(static_cast<std::size_t>(targets));
      for (std::uint64_t r = 0; r < n; ++r) {
        const void* v = out[static_cast<std::size_t>(targets)].values;
        const double label = target_value(t, v, r);
        if (!(label >= 0 && label < classes && label == std::floor(label)))
          throw Error(train.describe_row(first + r, targets) +
                          strf(" %g is not a class in [0, %d): class_weights balanced counts rows by class", label,
                               classes),
                      ExitCode::bad_input);
        count[static_cast<std::size_t>(label)] += 1;
      }
    } else {
      std::istringstream in(text);
      for (std::string item; std::getline(in, item, ',');) {
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !(v >= 0) || !std::isfinite(v))
          deck.fail("class_weights", "'" + item + "' is not a weight (a number >= 0)");
        c.push_back(static_cast<float>(v));
      }
      if (c.size() != static_cast<std::size_t>(classes)) {
        std::string order;  // the class order a list follows
        for (int k = 0; k < classes; ++k) order += (k ? ", " : "") + name(k);
        deck.fail("class_weights", strf("gives %d weights for %d classes (%s): balanced, or one weight per class "
                                        "in this order",
                                        static_cast<int>(c.size()), classes, order.c_str()));
      }
    }
  });
  if (text == "balanced") {
    comm.allreduce_sum(count.data(), count.size());  // whole numbers: exact, the same on any rank count
    const double rows = std::accumulate(count.begin(), count.end(), 0.0);
    comm.run_agreed([&] {
      for (int k = 0; k < classes; ++k)
        if (count[static_cast<std::size_t>(k)] == 0)
          deck.fail("class_weights",
                    "balanced: class " + name(k) +
                        " has no training rows (its weight n / (classes x 0) is infinite): give the "
                        "weights as a list");
    });
    for (int k = 0; k < classes; ++k)
      c.push_back(static_cast<float>(rows / (classes * count[static_cast<std::size_t>(k)])));
  }
  std::string list;
  for (int k = 0; k < classes; ++k)
    list += (k ? ", " : "") + name(k) + " " + strf("%.6g", static_cast<double>(c[static_cast<std::size_t>(k)]));
  Log::info("  class_weights " + text + ": " + list);
  return c;
}

std::vector<float> read_weight_file(const std::string& file, std::uint64_t rows, const std::string& key) {
  try {
    const auto n = static_cast<long long>(rows);
    return io::read_column_block(file, 0, n, n, key);  // a bad value names its line
  } catch (const Error& e) {
    const std::string what = e.what();  // a value that is not a number: the key goes first
    if (what.find(": " + key + ": ") != std::string::npos) throw;
    throw Error(key + " " + what, e.code());
  }
}

std::vector<float> network_weight_file(const deck::Deck& deck, const std::string& file_key, std::uint64_t rows,
                                       const Comm& comm) {
  const std::string key = file_key == "data_file" ? "weight_file" : "validation_weight_file";
  const std::string file = deck_string(deck, key.c_str());
  if (file.empty()) return {};
  std::vector<float> w;
  comm.run_agreed([&] {
    if (!deck_string(deck, "weight_column").empty())
      deck.fail(key, "weight_column gives " + file_key + "'s weights already: give them one way");
    w = read_weight_file(file, rows, key);
  });
  return w;
}

// Note [zero total weight]
// Validation reports sum w l / sum w: validation rows that all weigh 0 (a weight column, a weight
// file or class weights that give each of them 0) leave every metric 0 / 0, a NaN that early
// stopping, the plateau schedule and best_output would then watch. Training rows that all weigh 0
// give every step the loss sum w l / B = 0 and a zero gradient: the run would train to the end and
// write a model that learnt nothing. The weights are fixed once the rows are loaded (no later step
// changes them), so each part is checked once where its rows load: the validation rows' sum by the
// Evaluator (their block sums, one all-reduce), the training rows' largest weight over every rank's
// rows of the first epoch (the shard; each epoch holds every row once). Only the global figure
// decides: one rank's rows may all weigh 0 when the others' do not. The run is refused naming where
// the weights came from. predict's weighted metrics are refused alike; the trees check their files
// where they read them (gbdt/data.cpp).
namespace {

// Where `rows` rows' weights came from: "FILE: KEY" and the words for class_weights times a column or file.
std::string weight_origin(const deck::Deck& deck, const std::string& data_file, const std::string& file_key) {
  const std::string column = deck_string(deck, "weight_column");
  std::string file = data_file, key = "class_weights";
  if (!deck_string(deck, file_key.c_str()).empty()) file = deck_string(deck, file_key.c_str()), key = file_key;
  else if (!column.empty()) key = "weight_column '" + column + "'";
  const std::string times = key != "class_weights" && !deck_string(deck, "class_weights").empty()
                                ? " (times class_weights)"
                                : "";
  return where(file, 0, key) + times;
}

}  // namespace

void check_validation_weight_total(const deck::Deck& deck, double total, std::uint64_t rows, const Comm& comm) {
  if (total != 0 || rows == 0) return;  // unweighted (-1), or weights to divide by
  const std::string validation = deck_string(deck, "validation_file");
  const std::string origin = validation.empty() ? weight_origin(deck, deck_string(deck, "data_file"), "weight_file")
                                                : weight_origin(deck, validation, "validation_weight_file");
  const std::string which = validation.empty() ? "held-out rows (validation_fraction)" : "validation rows";
  // The origin's " (times class_weights)" goes after the rows it weighs.
  const std::size_t times = origin.find(" (times");
  comm.agree(origin.substr(0, times) + strf(": the weights of the %llu ", (unsigned long long)rows) + which +
                 (times == std::string::npos ? "" : origin.substr(times)) +
                 " are all 0: the validation metrics sum w l / sum w would be 0 / 0; give some validation row a "
                 "weight > 0",
             ExitCode::bad_input);
}

void check_training_weight_total(const deck::Deck& deck, double largest, std::uint64_t rows,
                                 const std::string& description, const Comm& comm) {
  const double top = comm.max(largest);
  if (top != 0 || rows == 0) return;  // unweighted (-1), or some row that teaches
  // An ensemble member's rows carry the ensemble's weights, which its deck does not name: the rows do.
  const std::string origin = row_weight_key(deck).empty()
                                 ? description
                                 : weight_origin(deck, deck_string(deck, "data_file"), "weight_file");
  const std::size_t times = origin.find(" (times");
  comm.agree(origin.substr(0, times) + strf(": the weights of the %llu training rows", (unsigned long long)rows) +
                 (times == std::string::npos ? "" : origin.substr(times)) +
                 " are all 0: every step's loss sum w l / B would be 0 and the model would learn nothing; give "
                 "some training row a weight > 0",
             ExitCode::bad_input);
}

void weigh_by_class(const deck::Deck& deck, std::shared_ptr<const Dataset>& train,
                    std::shared_ptr<const Dataset>& validation, const std::vector<std::string>& names,
                    const Comm& comm) {
  int classes = 0;  // cross_entropy: a text label's classes, else num_classes; bce: 0 and 1
  for (const FieldSpec& f : train->fields())
    if (f.name == "targets") {
      if (deck.get_string("loss") == "bce") classes = f.width() == 1 ? 2 : 0;
      else if (f.dtype != DType::f32 && f.max_value < (1ll << 24)) classes = static_cast<int>(f.max_value) + 1;
      else classes = static_cast<int>(deck.get_int("num_classes"));
    }
  const std::vector<float> c = choose_class_weights(deck, *train, classes, names, comm);
  if (c.empty()) return;
  train = with_class_weights(train, c);
  validation = with_class_weights(validation, c);
}

}  // namespace hpct
