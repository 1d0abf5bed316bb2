// Categorical features of a table: which features hold categories and the categories' names in
// code order, agreed over ranks before binning (Note [category codes]).
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "io/text_tables.hpp"

namespace hpct::gbdt {

struct Categories {
  std::vector<char> is;                         // per feature; empty: no categorical feature
  std::vector<std::vector<std::string>> names;  // per feature: the categories by code
  bool any() const;
  bool of(int f) const { return static_cast<std::size_t>(f) < is.size() && is[static_cast<std::size_t>(f)] != 0; }
  // Per feature: the number of categories, -1 for a numeric feature (set_categorical's argument).
  std::vector<int> counts(int num_features) const;
};

// The name of a numeric value in a categorical column: "3" for 3.0, else its 9 significant digits.
std::string category_of_number(float v);

// What a table's reader hands over: the rows' values [rows, cols] (NaN where `strings` holds a
// text field), those text fields (may be null: a source without text), the file's lines and the
// feature names for messages.
struct RawColumns {
  std::vector<float>* x;
  long long rows, cols;
  const io::TextStrings* strings;
  const std::vector<std::string>* feature_names;
  const std::vector<int>* line;
  std::string file;
};

// Collective. Replaces the values of the categorical features in *in.x by category codes (NaN
// stays missing) and returns the categories. With `given` (the training data's or a model's), its
// features are the categorical ones and its names the codes: a category it does not know becomes
// missing, text in a feature it reads as numbers is an error naming file, line and column. Without,
// the `declared` features (categorical_columns) and every feature holding text are categorical.
Categories agree_categories(const RawColumns& in, const std::vector<char>& declared, const Categories* given,
                            const std::string& whose, const Comm& comm);

// A table's label column as its reader hands it over: the labels y [rows] (NaN where the text holds
// a class name), the label's text fields (entry `entry` of strings' dict and cells, Note [text labels])
// and the column's header name (may be empty) and file column for messages.
struct LabelColumn {
  std::vector<float>* y;
  long long rows;
  io::TextStrings* strings;
  std::size_t entry;
  std::string name;
  long long column;
  const std::vector<int>* line;
  std::string file;
};

// "column 'kind'" (a header name) or "column 3" (the 0-based file column).
std::string label_column_text(const std::string& name, long long column);

// Collective. A label column of class names: without `given` (the training data's or a model's
// classes), when some rank's labels hold text, the classes agreed over ranks as categories are
// (Note [category codes]: most frequent first) and *y replaced by class indices; numeric labels
// only: empty, y unchanged. With `given`: y coded by those classes, a class they lack an error
// naming file, line, column and class. Moves the label's entry out of `strings`.
std::vector<std::string> agree_classes(const LabelColumn& in, const std::vector<std::string>* given,
                                       const std::string& whose, const Comm& comm);

// categorical_columns (comma-separated names or 0-based file column indices) as a flag per
// feature; `label_column`, `group_column` (a ranking table's query ids) and `weight_column`: the
// file's label, query and row weight columns (-1: none), which shift the columns after them.
std::vector<char> declared_categorical(const std::string& list, const std::vector<std::string>& feature_names,
                                       long long cols, long long label_column, const std::string& file,
                                       long long group_column = -1, long long weight_column = -1);

}  // namespace hpct::gbdt
