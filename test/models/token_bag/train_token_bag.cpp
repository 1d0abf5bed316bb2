// train with the token_bag test family: the driver plus the one registry line a new family needs.
#include "models/registry.hpp"
#include "token_bag/token_bag_model.hpp"
#include "train/driver.hpp"

int main(int argc, char** argv) {
  hpct::register_model_family(hpct::test::token_bag_family());
  return hpct::train_main(argc, argv);
}
