// sample: ensembles of a trained diffusion model, scored against the truth (docs/diffusion.md). The program
// is the diffusion family's `evaluate` tool (Note [family tools], models/registry.hpp), in
// models/diffusion/diffusion_evaluate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) {
  return hpct::run_family_tool("diffusion", hpct::FamilyTool::evaluate, argc, argv);
}
