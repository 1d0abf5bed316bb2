// The `libsvm` data source: "label id:value ..." lines, absent ids missing (or 0: libsvm_absent), held dense
// (data/text_table.hpp); libsvm_base and libsvm_num_features are declared with the csv source's keys.
#include "data/source_registry.hpp"
#include "data/text_table.hpp"

namespace hpct {

DataSourceKind libsvm_source() {
  return {"libsvm", "sparse text 'label id:value ...' (.svm .libsvm), libsvm_base (fields inputs, targets)",
          nullptr, recognises_text<io::TextFormat::libsvm>, open_text<io::TextFormat::libsvm>};
}

}  // namespace hpct
