// A text table (CSV, TSV, LibSVM) as a TableDataset (data/table_dataset.hpp): fields "inputs"
// [features] and, with a label column, "targets" [1], float32. Opening makes one pass over the file
// (io::scan_text); reads parse only the rows asked for, so every rank holds its own rows and the
// row index.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/table_dataset.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"
#include "io/text_tables.hpp"

namespace hpct {

class TextTableDataset : public TableDataset {
 public:
  TextTableDataset(const std::string& file, const io::TextOptions& opt)
      : TextTableDataset(io::scan_text(file, opt)) {}
  // A file scanned already, read with its layout's options (network_libsvm_reading).
  explicit TextTableDataset(io::TextLayout layout);
  std::string description() const override { return t_.file; }
  std::uint64_t rows() const override { return static_cast<std::uint64_t>(t_.rows); }
  const TableColumns& columns() const override { return c_; }
  void read_table_rows(const std::uint64_t* rows, std::size_t n, float* x, float* y, io::TextStrings* strings,
                       float* w) const override {
    io::read_text_rows(t_, rows, n, x, y, strings, w);
  }
  std::string describe_row(std::uint64_t row, int field) const override;
  long long file_line(std::uint64_t row) const override { return t_.line.at(row); }
  const io::TextLayout& layout() const { return t_; }

 private:
  io::TextLayout t_;
  TableColumns c_;
};

// The LibSVM table under `data` (its reading options: libsvm_absent, libsvm_base); null for any
// other data set.
const TextTableDataset* libsvm_table(const Dataset* data);

// The deck keys of the text sources (label_column, group_column, weight_column, text_header,
// libsvm_base, libsvm_num_features, libsvm_absent, max_categories, text_allow_infinite), declared
// once by the csv source for all three.
void declare_text_table_keys(deck::Schema& s);

// The options the deck's table keys give for `file` read as `format` (label_column, group_column,
// weight_column, text_allow_infinite, ...; the Parquet source reads the same keys).
io::TextOptions table_options(const deck::Deck& deck, const std::string& file, io::TextFormat format);

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
