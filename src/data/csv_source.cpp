// The `csv` data source: comma-separated text, one row a line, a label column, an optional header
// of column names (data/text_table.hpp).
#include "data/source_registry.hpp"
#include "data/text_table.hpp"

namespace hpct {

namespace {

std::shared_ptr<const Dataset> open_csv(const deck::Deck& deck, const std::string& file) {
  return open_text_table(deck, file, io::TextFormat::csv);
}

bool recognises_csv(const deck::Deck&, const std::string& file) {
  return text_extension_is(file, io::TextFormat::csv);
}

}  // namespace

DataSourceKind csv_source() {
  // The text keys are shared with tsv and libsvm; declared here once.
  return {"csv", "comma-separated text, label_column, text_header (fields inputs, targets)",
          declare_text_table_keys, recognises_csv, open_csv};
}

}  // namespace hpct
