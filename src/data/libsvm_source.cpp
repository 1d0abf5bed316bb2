// The `libsvm` data source: "label id:value ..." lines, absent ids missing, held dense
// (data/text_table.hpp); libsvm_base and libsvm_num_features are declared with the csv source's keys.
#include "data/source_registry.hpp"
#include "data/text_table.hpp"

namespace hpct {

namespace {

std::shared_ptr<const Dataset> open_libsvm(const deck::Deck& deck, const std::string& file) {
  return open_text_table(deck, file, io::TextFormat::libsvm);
}

bool recognises_libsvm(const deck::Deck&, const std::string& file) {
  return text_extension_is(file, io::TextFormat::libsvm);
}

}  // namespace

DataSourceKind libsvm_source() {
  return {"libsvm", "sparse text 'label id:value ...' (.svm .libsvm), libsvm_base (fields inputs, targets)",
          nullptr, recognises_libsvm, open_libsvm};
}

}  // namespace hpct
