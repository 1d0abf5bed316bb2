// The text-table Dataset shared by the csv, tsv and libsvm sources (see text_table.hpp): fields,
// reads through io::read_text_rows, the deck keys and how they become io::TextOptions.
#include "data/text_table.hpp"

#include <cctype>
#include <cmath>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct {

TextTableDataset::TextTableDataset(io::TextLayout layout) : t_(std::move(layout)) {
  c_.file = t_.file;
  c_.rows = t_.rows;
  c_.cols = t_.cols;
  c_.names = t_.names;
  c_.label_name = t_.label_name;
  c_.header = t_.opt.header;
  c_.libsvm = t_.opt.format == io::TextFormat::libsvm;
  c_.label_column = c_.libsvm ? -1 : t_.opt.label_column;
  c_.group_column = t_.opt.group_column;
  c_.weight_column = t_.opt.weight_column;
  c_.query_start = t_.query_start;
}

const TextTableDataset* libsvm_table(const Dataset* data) {
  const auto* t = dynamic_cast<const TextTableDataset*>(data);
  return t && t->columns().libsvm ? t : nullptr;
}

std::string TextTableDataset::describe_row(std::uint64_t row, int field) const {
  const std::string where = t_.file + ":" + std::to_string(t_.line.at(row)) + ": ";
  const bool libsvm = c_.libsvm;
  if (libsvm && field != 0) return where + "label";
  const auto column = [&](long long f, const std::string& name) {
    return name.empty() ? "column " + std::to_string(f) : "column '" + name + "'";
  };
  if (field != 0) return where + "label " + column(t_.opt.label_column, t_.label_name);
  // A bad value's message names its column (a missing number among many): the row read again, the
  // first value that is not finite found. Only on this error path, so the second read costs nothing.
  std::vector<float> x(static_cast<std::size_t>(t_.cols)), y(1);
  try {
    io::read_text_rows(t_, &row, 1, x.data(), labelled() ? y.data() : nullptr);
  } catch (const std::exception&) {
    return where + "features";
  }
  for (long long f = 0; f < t_.cols; ++f) {
    if (std::isfinite(x[static_cast<std::size_t>(f)])) continue;
    if (libsvm)  // the id as the file writes it; absent or written as nan
      return where + "feature id " + std::to_string(f + t_.opt.libsvm_base) +
             (t_.opt.absent_zero ? "" : " (absent or nan: libsvm_absent missing reads an absent entry as missing)");
    const long long file_column = f + (t_.opt.label_column >= 0 && f >= t_.opt.label_column ? 1 : 0);
    return where + column(file_column, static_cast<std::size_t>(f) < t_.names.size()
                                           ? t_.names[static_cast<std::size_t>(f)]
                                           : std::string());
  }
  return where + "features";
}

void declare_text_table_keys(deck::Schema& s) {
  s.add_string("label_column", "0",
               "CSV/TSV: the label column, a 0-based index or a header name (text_header); none: no label "
               "(scoring)");
  s.add_string("group_column", "",
               "CSV/TSV ranking tables: the column holding the query id, a 0-based index or a header name (not a "
               "feature; a query's rows contiguous); empty: none (LibSVM: qid: tokens; docs/ranking.md)");
  s.add_string("weight_column", "",
               "CSV/TSV for the trees and the mlp: the column holding each row's weight (>= 0), a 0-based index or "
               "a "
               "header name (not a feature; LightGBM's weight_column); empty: none (weight_file; docs/gbdt.md, "
               "docs/row_weights.md)");
  s.add_bool("text_header", false, "CSV/TSV: the first line holds column names (kept as feature names)");
  s.add_int("libsvm_base", 1, 0, 1, "LibSVM: feature ids start at 0 or 1");
  s.add_int("libsvm_num_features", 0, 0, 1 << 30, "LibSVM: feature count (0: highest id in the file)");
  s.add_choice("libsvm_absent", "missing", {"missing", "zero"},
               "LibSVM: what an absent id:value entry is: missing (XGBoost's reading) or zero (LightGBM's); "
               "kept in a GBDT model file, so predict reads as training did; unset, networks read zero "
               "(scikit-learn's load_svmlight_file)");
  s.add_int("max_categories", 1000, 1, 1 << 24,
            "CSV/TSV for networks: most categories a one-hot column may hold (one input each, docs/tables.md); "
            "more is an error naming the column");
  s.add_int("onehot_max_categories", 0, 0, 1 << 24,
            "CSV/TSV for the mlp with category_embedding: columns with at most this many categories stay one-hot "
            "blocks");
  s.add_bool("text_allow_infinite", false,
             "CSV/TSV/LibSVM: read inf and values beyond float's range as +-inf (scoring: trees send them one "
             "way) instead of refusing them; an ensemble reads them unless set false (its members' rule decides)");
}

io::TextOptions table_options(const deck::Deck& deck, const std::string& file, io::TextFormat format) {
  io::TextOptions opt;
  opt.format = format;
  const std::string& label = deck.get_string("label_column");
  if (label == "none") {
    opt.label_column = -1;
  } else if (!label.empty() && label.find_first_not_of("0123456789") == std::string::npos) {
    if (label.size() > 7) deck.fail("label_column", "column index " + label + " is too large");
    opt.label_column = std::stoi(label);
  } else {
    if (label.empty()) deck.fail("label_column", "expected a column index, a header name or none");
    opt.label_name = label;
  }
  const std::string& group = deck.get_string("group_column");
  if (!group.empty() && group.find_first_not_of("0123456789") == std::string::npos) {
    if (group.size() > 7) deck.fail("group_column", "column index " + group + " is too large");
    opt.group_column = std::stoi(group);
  } else {
    opt.group_name = group;
  }
  const std::string& weight = deck.get_string("weight_column");
  if (!weight.empty() && format == io::TextFormat::libsvm)
    deck.fail("weight_column", file + " is LibSVM: its weights go in weight_file (one number per line)");
  if (!weight.empty() && weight.find_first_not_of("0123456789") == std::string::npos) {
    if (weight.size() > 7) deck.fail("weight_column", "column index " + weight + " is too large");
    opt.weight_column = std::stoi(weight);
  } else {
    opt.weight_name = weight;
  }
  opt.header = deck.get_bool("text_header");
  opt.libsvm_base = static_cast<int>(deck.get_int("libsvm_base"));
  opt.absent_zero = deck.get_string("libsvm_absent") == "zero";
  if (format == io::TextFormat::libsvm && deck.get_int("libsvm_num_features") > 0)
    opt.num_features = deck.get_int("libsvm_num_features");
  // Note [ensemble infinite numbers]
  // An ensemble's rule for an Inf is its members' (Note [member non-finite inputs] in
  // ensemble/refused_rows.cpp): trees read it as a value, a network member refuses it, naming the
  // row, the split and the member. `predict ENSEMBLE` reads a text table's Inf (predict sets
  // text_allow_infinite) and applies that rule; the ensemble's run refused it at load, before any
  // member was asked, so an ensemble of trees trained refusing the rows its predict scores (and an
  // Inf its HDF5 reader keeps as a value). So an ensemble reads it unless its deck sets
  // text_allow_infinite false, and its members' rule decides, in training as in predict.
  const bool ensemble = deck.schema().find("model") && deck.get_string("model") == "ensemble";
  opt.allow_infinite = deck.is_set("text_allow_infinite") ? deck.get_bool("text_allow_infinite") : ensemble;
  return opt;
}

std::shared_ptr<const Dataset> open_text_table(const deck::Deck& deck, const std::string& file,
                                               io::TextFormat format) {
  return std::make_shared<TextTableDataset>(file, table_options(deck, file, format));
}

std::shared_ptr<const Dataset> network_libsvm_reading(const deck::Deck& deck, std::shared_ptr<const Dataset> data) {
  const auto t = std::dynamic_pointer_cast<const TextTableDataset>(data);
  if (!t || t->layout().opt.format != io::TextFormat::libsvm || deck.is_set("libsvm_absent")) return data;
  io::TextLayout layout = t->layout();  // the scan's row index, not the file read again
  layout.opt.absent_zero = true;
  Log::info("  " + t->description() +
            ": LibSVM, absent entries read as 0 (libsvm_absent zero, the networks' default; missing: as missing "
            "numbers)");
  return std::make_shared<TextTableDataset>(std::move(layout));
}

bool text_extension_is(const std::string& file, io::TextFormat format) {
  io::TextFormat f{};
  return io::format_from_extension(file, f) && f == format;
}

}  // namespace hpct
