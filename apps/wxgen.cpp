// wxgen: the regional weather data set (shallow water, NetCDF; docs/gnn.md). The program is the gnn
// family's `generate` tool (Note [family tools], models/registry.hpp), in models/gnn/gnn_generate.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) { return hpct::run_family_tool("gnn", hpct::FamilyTool::generate, argc, argv); }
