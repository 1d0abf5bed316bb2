// cape_eval: PCK per test category of a trained `model cape` against the copy baseline (docs/cape.md). The
// program is the cape family's `evaluate` tool (Note [family tools], models/registry.hpp), in
// models/cape/cape_evaluate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) { return hpct::run_family_tool("cape", hpct::FamilyTool::evaluate, argc, argv); }
