// predict's path for network weights files (see predict.cpp).
#pragma once

#include "comm/comm.hpp"

namespace hpct::tools {

extern const char* const kNetworkUsage;
// predict WEIGHTS.h5 DATA.h5 OUT.h5 [options]: every output of Model::predict as one dataset.
int predict_network(int argc, char** argv, const Comm& comm);

}  // namespace hpct::tools
