// Category dictionaries: text and integer columns become category codes, the same on every rank.
#include "gbdt/categories.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "core/log.hpp"
#include "deck/deck.hpp"

namespace hpct::gbdt {

// Note [category codes]
// Ranks read different rows, so each sees only some categories. The ranks first agree which
// features are categorical (declared, or holding text on any rank: an all-reduce of flags), then
// rank 0 gathers every rank's (category, row count) pairs, sums the counts and numbers the
// categories by count, most frequent first, ties by their bytes, and broadcasts the list: the
// codes depend on the whole file only, never on the rank count, so the bins and trees do not
// either. Frequency order puts the categories that do not fit max_bin (set_categorical) at the
// rare end. A number in a categorical column is the category of its decimal form ("3", not "3.0"),
// so integer-coded columns and text columns with a few numbers read alike. Validation, test and
// prediction data take the training data's list: a category it lacks becomes missing (and goes
// right, Note [categorical splits]).

bool Categories::any() const {
  return std::any_of(is.begin(), is.end(), [](char c) { return c != 0; });
}

std::vector<int> Categories::counts(int num_features) const {
  std::vector<int> n(static_cast<std::size_t>(num_features), -1);
  for (int f = 0; f < num_features; ++f)
    if (of(f)) n[static_cast<std::size_t>(f)] = static_cast<int>(names[static_cast<std::size_t>(f)].size());
  return n;
}

std::string category_of_number(float v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15f) return strf("%lld", static_cast<long long>(v));
  return strf("%.9g", static_cast<double>(v));
}

namespace {

std::string column_name(const RawColumns& in, long long f) {
  const auto& n = *in.feature_names;
  return static_cast<std::size_t>(f) < n.size() ? "column '" + n[static_cast<std::size_t>(f)] + "'"
                                                : "feature " + std::to_string(f);
}

// Rank 0's sorted list from every rank's (name, count) pairs, on every rank.
std::vector<std::string> agreed_names(const std::map<std::string, long long>& local, const Comm& comm) {
  std::vector<char> mine;
  for (const auto& [name, count] : local) {
    mine.insert(mine.end(), name.begin(), name.end());
    mine.push_back('\0');
    const std::string c = std::to_string(count);
    mine.insert(mine.end(), c.begin(), c.end());
    mine.push_back('\0');
  }
  const std::vector<char> all = comm.gather_to_root(mine);
  std::string joined;
  if (comm.rank() == 0) {
    std::map<std::string, long long> sum;
    for (std::size_t at = 0; at < all.size();) {
      const std::string name(all.data() + at);
      at += name.size() + 1;
      const std::string count(all.data() + at);
      at += count.size() + 1;
      sum[name] += std::stoll(count);
    }
    std::vector<std::pair<long long, std::string>> order;
    for (const auto& [name, count] : sum) order.emplace_back(-count, name);
    std::sort(order.begin(), order.end());
    for (const auto& o : order) joined += o.second + '\0';
  }
  comm.broadcast(joined);
  std::vector<std::string> names;
  for (std::size_t at = 0; at < joined.size();) {
    names.emplace_back(joined.data() + at);
    at += names.back().size() + 1;
  }
  return names;
}

}  // namespace

Categories agree_categories(const RawColumns& in, const std::vector<char>& declared, const Categories* given,
                            const std::string& whose, const Comm& comm) {
  const long long F = in.cols;
  const auto has_text = [&](long long f) {
    return in.strings && static_cast<std::size_t>(f) < in.strings->cells.size() &&
           !in.strings->cells[static_cast<std::size_t>(f)].empty();
  };
  // Which features: the given ones, else declared or holding text on some rank.
  std::vector<int> flag(static_cast<std::size_t>(F), 0);
  for (long long f = 0; f < F; ++f) {
    const auto u = static_cast<std::size_t>(f);
    flag[u] = given ? (given->of(static_cast<int>(f)) ? 1 : 0)
                    : ((u < declared.size() && declared[u]) || has_text(f) ? 1 : 0);
  }
  if (!given) comm.allreduce_sum(flag.data(), flag.size());
  comm.run_agreed([&] {
    if (!given) return;
    for (long long f = 0; f < F; ++f)
      if (!flag[static_cast<std::size_t>(f)] && has_text(f)) {
        const auto& cell = in.strings->cells[static_cast<std::size_t>(f)].front();
        input_error(in.file, (*in.line)[cell.first], "",
                    column_name(in, f) + " holds '" + in.strings->dict[static_cast<std::size_t>(f)][cell.second] +
                        "', not a number, but " + whose + " reads it as numbers");
      }
  });
  Categories cat;
  if (std::none_of(flag.begin(), flag.end(), [](int v) { return v != 0; })) return cat;
  cat.is.assign(static_cast<std::size_t>(F), 0);
  cat.names.resize(static_cast<std::size_t>(F));
  std::vector<float>& x = *in.x;
  std::string summary;
  for (long long f = 0; f < F; ++f) {
    const auto u = static_cast<std::size_t>(f);
    if (!flag[u]) continue;
    cat.is[u] = 1;
    // This rank's categories with their row counts: numbers by their decimal form, then text.
    std::vector<std::string> number_name(static_cast<std::size_t>(in.rows));
    std::map<std::string, long long> local;
    for (long long r = 0; r < in.rows; ++r) {
      const float v = x[static_cast<std::size_t>(r * F + f)];
      if (std::isnan(v)) continue;
      number_name[static_cast<std::size_t>(r)] = category_of_number(v);
      ++local[number_name[static_cast<std::size_t>(r)]];
    }
    if (has_text(f))
      for (const auto& [row, id] : in.strings->cells[u]) ++local[in.strings->dict[u][id]];
    cat.names[u] = given ? given->names[u] : agreed_names(local, comm);
    std::unordered_map<std::string, float> code;
    for (std::size_t c = 0; c < cat.names[u].size(); ++c) code.emplace(cat.names[u][c], static_cast<float>(c));
    const auto code_of = [&](const std::string& name) {
      const auto it = code.find(name);
      return it == code.end() ? std::nanf("") : it->second;  // unseen: missing
    };
    for (long long r = 0; r < in.rows; ++r)
      if (!number_name[static_cast<std::size_t>(r)].empty())
        x[static_cast<std::size_t>(r * F + f)] = code_of(number_name[static_cast<std::size_t>(r)]);
    if (has_text(f))
      for (const auto& [row, id] : in.strings->cells[u])
        x[static_cast<std::size_t>(row) * static_cast<std::size_t>(F) + u] = code_of(in.strings->dict[u][id]);
    summary += (summary.empty() ? "" : ", ") + column_name(in, f) + " (" + std::to_string(cat.names[u].size()) +
               ")";
  }
  if (!given && comm.rank() == 0) Log::info(in.file + ": categorical: " + summary);
  return cat;
}

// Note [text labels]
// A classifier's label column may name its classes ("setosa", "versicolor", ...): the label is then
// one more categorical column, coded by the same agreement (Note [category codes]), so class k is
// the k-th most frequent class of the training file and the codes -- hence the trees and the
// weights -- do not depend on the rank count. The mlp (cross_entropy) and the trees (binary,
// multiclass) both call agree_classes; a binary objective's positive class (1) is therefore the
// rarer of the two. Validation, test and prediction files take the training data's (the model's)
// classes; a class it lacks has no output to score it, so it is an error, not a missing value.

std::string label_column_text(const std::string& name, long long column) {
  return name.empty() ? "column " + std::to_string(column) : "column '" + name + "'";
}

std::vector<std::string> agree_classes(const LabelColumn& in, const std::vector<std::string>* given,
                                       const std::string& whose, const Comm& comm) {
  // The label as a one-column table of its own.
  io::TextStrings label;
  label.dict.push_back(std::move(in.strings->dict.at(in.entry)));
  label.cells.push_back(std::move(in.strings->cells.at(in.entry)));
  const std::vector<std::string> names{in.name.empty() ? std::to_string(in.column) : in.name};
  const std::vector<float> read = *in.y;  // for messages: the numbers as written
  Categories known;
  if (given) {
    known.is = {1};
    known.names = {*given};
  }
  const Categories classes = agree_categories({in.y, in.rows, 1, &label, &names, in.line, in.file}, {},
                                              given ? &known : nullptr, whose, comm);
  if (!given) return classes.of(0) ? classes.names[0] : std::vector<std::string>{};
  comm.run_agreed([&] {  // a class the training data lacks cannot be scored
    for (std::size_t r = 0; r < in.y->size(); ++r) {
      if (!std::isnan((*in.y)[r])) continue;
      std::string name = std::isnan(read[r]) ? std::string() : category_of_number(read[r]);
      for (const auto& [row, id] : label.cells[0])
        if (row == r) name = label.dict[0][id];
      input_error(in.file, (*in.line)[r], "",
                  label_column_text(in.name, in.column) + " holds '" + name + "', not a class of " + whose + " (" +
                      std::to_string(given->size()) + " classes)");
    }
  });
  return *given;
}

std::vector<char> declared_categorical(const std::string& list, const std::vector<std::string>& feature_names,
                                       long long cols, long long label_column, const std::string& file,
                                       long long group_column, long long weight_column) {
  std::vector<char> out(static_cast<std::size_t>(cols), 0);
  for (const std::string& item : deck::split_list(list)) {
    long long f = -1;
    if (!item.empty() && item.size() < 10 && item.find_first_not_of("0123456789") == std::string::npos) {
      const long long c = std::stoll(item);  // a file column: the label's is not a feature
      if (c == label_column) input_error(file, 0, "categorical_columns", "column " + item + " is the label column");
      if (c == group_column)
        input_error(file, 0, "categorical_columns", "column " + item + " is the query id column (group_column)");
      if (c == weight_column)
        input_error(file, 0, "categorical_columns", "column " + item + " is the row weight column (weight_column)");
      f = c;
      for (const long long other : {label_column, group_column, weight_column})
        if (other >= 0 && c > other) --f;
    } else {
      const auto it = std::find(feature_names.begin(), feature_names.end(), item);
      if (it == feature_names.end())
        input_error(file, 0, "categorical_columns",
                    "no feature column named '" + clip_for_log(item) + "'" +
                        (feature_names.empty() ? " (the file has no header: text_header)" : ""));
      f = it - feature_names.begin();
      if (std::find(it + 1, feature_names.end(), item) != feature_names.end())
        input_error(file, 0, "categorical_columns",
                    "'" + clip_for_log(item) + "' names two feature columns of the header: rename one");
    }
    if (f < 0 || f >= cols) input_error(file, 0, "categorical_columns", "column " + item + " does not exist");
    out[static_cast<std::size_t>(f)] = 1;
  }
  return out;
}

}  // namespace hpct::gbdt
