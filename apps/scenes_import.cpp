// scenes_import: recorded track tables (Argoverse 2's columns, CSV or Parquet) -> scenes for `model
// smart` (docs/transformer.md). The program is the smart family's `import_data` tool (Note [family
// tools], models/registry.hpp), in models/smart/smart_import.cpp; a Parquet table loads the Parquet
// module (Note [Parquet module] in src/io/parquet_module.cpp).
#include "models/registry.hpp"

int main(int argc, char** argv) {
  return hpct::run_family_tool("smart", hpct::FamilyTool::import_data, argc, argv);
}
