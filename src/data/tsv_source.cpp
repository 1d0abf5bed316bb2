// The `tsv` data source: tab-separated text (.tsv, .txt, and LightGBM's .train/.test), with the
// csv source's keys (data/text_table.hpp).
#include "data/source_registry.hpp"
#include "data/text_table.hpp"

namespace hpct {

namespace {

std::shared_ptr<const Dataset> open_tsv(const deck::Deck& deck, const std::string& file) {
  return open_text_table(deck, file, io::TextFormat::tsv);
}

bool recognises_tsv(const deck::Deck&, const std::string& file) {
  return text_extension_is(file, io::TextFormat::tsv);
}

}  // namespace

DataSourceKind tsv_source() {
  return {"tsv", "tab-separated text (.tsv .txt .train .test), keys as csv (fields inputs, targets)", nullptr,
          recognises_tsv, open_tsv};
}

}  // namespace hpct
