// posegen: articulated shapes for category-agnostic keypoints, `model cape` (docs/cape.md). The program is
// the cape family's `generate` tool (Note [family tools], models/registry.hpp), in
// models/cape/cape_generate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) { return hpct::run_family_tool("cape", hpct::FamilyTool::generate, argc, argv); }
