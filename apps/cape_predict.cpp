// cape_predict: a trained `model cape` places the keypoints one annotated photograph (the support)
// shows on other photographs' boxes, as COCO keypoint results (docs/cape.md). The program is the
// cape family's `predict` tool (Note [family tools], models/registry.hpp), in
// models/cape/cape_predict.cpp.
#include "models/registry.hpp"

int main(int argc, char** argv) { return hpct::run_family_tool("cape", hpct::FamilyTool::predict, argc, argv); }
