// scenes_import: recorded track tables (Argoverse 2's columns, CSV or Parquet) -> scenes for `model
// smart` (docs/transformer.md). The program is the smart family's `import_data` tool (Note [family
// tools], models/registry.hpp), in models/smart/smart_import.cpp; this program alone links the
// Parquet reader (Note [Parquet by registration] in src/io/table_rows.cpp).
#include "models/registry.hpp"
#include "parquet/parquet_rows.hpp"

int main(int argc, char** argv) {
  hpct::parquet::enable_parquet_rows();
  return hpct::run_family_tool("smart", hpct::FamilyTool::import_data, argc, argv);
}
