// wxeval: rollouts of a trained gnn against persistence, per lead time (docs/gnn.md). The program is the
// gnn family's `evaluate` tool (Note [family tools], models/registry.hpp), in models/gnn/gnn_evaluate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) { return hpct::run_family_tool("gnn", hpct::FamilyTool::evaluate, argc, argv); }
