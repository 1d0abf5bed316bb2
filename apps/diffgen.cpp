// diffgen: the synthetic downscaling data set of the diffusion model (docs/diffusion.md). The program is
// the diffusion family's `generate` tool (Note [family tools], models/registry.hpp), in
// models/diffusion/diffusion_generate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) {
  return hpct::run_family_tool("diffusion", hpct::FamilyTool::generate, argc, argv);
}
