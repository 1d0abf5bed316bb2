// The `csv` data source: comma-separated text, one row a line, a label column, an optional header
// of column names (data/text_table.hpp).
#include "data/source_registry.hpp"
#include "data/text_table.hpp"

namespace hpct {

DataSourceKind csv_source() {
  // The text keys are shared with tsv and libsvm; declared here once.
  return {"csv", "comma-separated text, label_column, text_header (fields inputs, targets)",
          declare_text_table_keys, recognises_text<io::TextFormat::csv>, open_text<io::TextFormat::csv>};
}

}  // namespace hpct
