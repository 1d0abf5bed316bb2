// The `tsv` data source: tab-separated text (.tsv, .txt, and LightGBM's .train/.test), with the
// csv source's keys (data/text_table.hpp).
#include "data/source_registry.hpp"
#include "data/text_table.hpp"

namespace hpct {

DataSourceKind tsv_source() {
  return {"tsv", "tab-separated text (.tsv .txt .train .test), keys as csv (fields inputs, targets)", nullptr,
          recognises_text<io::TextFormat::tsv>, open_text<io::TextFormat::tsv>};
}

}  // namespace hpct
