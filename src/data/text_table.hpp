// A text table (CSV, TSV, LibSVM) as a Dataset: fields "inputs" [features] and, with a label
// column, "targets" [1], float32. Opening makes one pass over the file (io::scan_text); reads parse
// only the rows asked for, so every rank holds its own rows and the row index.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "io/text_tables.hpp"

namespace hpct {

class TextTableDataset : public Dataset {
 public:
  TextTableDataset(const std::string& file, const io::TextOptions& opt) : t_(io::scan_text(file, opt)) {}
  // A file scanned already, read with its layout's options (network_libsvm_reading).
  explicit TextTableDataset(io::TextLayout layout) : t_(std::move(layout)) {}
  std::string description() const override { return t_.file; }
  std::uint64_t rows() const override { return static_cast<std::uint64_t>(t_.rows); }
  std::vector<FieldSpec> fields() const override;
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override;
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override;
  std::string describe_row(std::uint64_t row, int field) const override;
  std::vector<std::string> value_names(int field) const override;
  long long file_line(std::uint64_t row) const override { return t_.line.at(row); }
  const io::TextLayout& layout() const { return t_; }
  // CSV/TSV: rows [first, first + count) as read_block, with the feature fields that are not
  // numbers in `strings` (NaN in x) instead of an error: the trees' categorical columns. With a
  // weight column (weight_column), `w` [count] gets the row weights.
  void read_block_strings(std::uint64_t first, std::uint64_t count, float* x, float* y, io::TextStrings& strings,
                          float* w = nullptr) const;

 private:
  bool labelled() const { return t_.opt.label_column >= 0 || t_.opt.format == io::TextFormat::libsvm; }
  io::TextLayout t_;
};

// The deck keys of the text sources (label_column, group_column, weight_column, text_header,
// libsvm_base, libsvm_num_features, libsvm_absent, max_categories, text_allow_infinite), declared
// once by the csv source for all three.
void declare_text_table_keys(deck::Schema& s);

// Opens `file` as `format` with the options the deck's text keys give.
std::shared_ptr<const Dataset> open_text_table(const deck::Deck& deck, const std::string& file,
                                               io::TextFormat format);

// A network's reading of a LibSVM file (Note [absent LibSVM entries] in io/libsvm_line.cpp): with
// libsvm_absent unset, `data` (a LibSVM table) read with absent entries 0, scikit-learn's
// load_svmlight_file; `data` itself otherwise (another source, or the key set: missing stays missing).
std::shared_ptr<const Dataset> network_libsvm_reading(const deck::Deck& deck, std::shared_ptr<const Dataset> data);

// Whether `file`'s extension says `format` (.csv; .tsv/.txt/.train/.test; .svm/.libsvm).
bool text_extension_is(const std::string& file, io::TextFormat format);

// The two DataSourceKind functions of text format F (the csv, tsv and libsvm sources name theirs).
template <io::TextFormat F>
std::shared_ptr<const Dataset> open_text(const deck::Deck& deck, const std::string& file) {
  return open_text_table(deck, file, F);
}
template <io::TextFormat F>
bool recognises_text(const deck::Deck&, const std::string& file) {
  return text_extension_is(file, F);
}

}  // namespace hpct
