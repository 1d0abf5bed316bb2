// trajgen: driving scenes for the SMART motion model (docs/transformer.md). The program is the smart
// family's `generate` tool (Note [family tools], models/registry.hpp), in models/smart/smart_generate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) { return hpct::run_family_tool("smart", hpct::FamilyTool::generate, argc, argv); }
