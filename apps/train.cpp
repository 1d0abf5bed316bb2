// train: the SPMD driver. Every rank runs this; see README.md for usage.
#include "train/driver.hpp"

int main(int argc, char** argv) { return hpct::train_main(argc, argv); }
