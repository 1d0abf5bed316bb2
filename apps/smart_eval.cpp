// smart_eval: rollouts of `model smart`, minADE / minFDE against constant velocity (docs/transformer.md).
// The program is the smart family's `evaluate` tool (Note [family tools], models/registry.hpp), in
// models/smart/smart_evaluate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) { return hpct::run_family_tool("smart", hpct::FamilyTool::evaluate, argc, argv); }
