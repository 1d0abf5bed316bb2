// String attributes of any length: a resolved deck or a model configuration over 64 KiB used to
// make the final weights write and every checkpoint fail after training (compact attribute storage
// in the object header). Short attributes keep their fixed-length string type for h5py readers.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>

#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "nn/weights_io.hpp"
#include "support/test_support.hpp"
#include "train/checkpoint.hpp"

using namespace hpct;
using hpct::test::scratch;
namespace fs = std::filesystem;

namespace {

// 200 KB of varied text (a constant string would hide a truncation at a round size).
std::string long_text(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += "hidden_sizes " + std::to_string(i) + "   # line\n";
  s.resize(n);
  return s;
}

// The stored type of a root attribute: its size in bytes and whether it is variable-length.
std::pair<std::size_t, bool> stored_type(const std::string& path, const std::string& key) {
  const h5::File f = h5::File::open_read(path);
  h5::Handle a(H5Aopen(f.id(), key.c_str(), H5P_DEFAULT), H5Aclose);
  h5::Handle t(H5Aget_type(a.id()), H5Tclose);
  return {H5Tget_size(t.id()), H5Tis_variable_str(t.id()) > 0};
}

nn::ParameterStore<float> small_store() {
  nn::ParameterStore<float> store;
  store.add("fc0/weight", {3, 2}, nn::Init::linear(2), true);
  store.add("fc0/bias", {3}, nn::Init::linear(2), false);
  store.allocate();
  store.initialize(5);
  return store;
}

}  // namespace

TEST(LongAttributes, RoundTripThroughAFileOnDisk) {
  const std::string path = scratch("long_attr_disk.h5");
  const std::string text = long_text(200000);
  {
    const h5::File f = h5::File::create(path);
    h5::write_attr(f, "/", "deck", text);
    h5::write_attr(f, "/", "model", std::string("mlp"));
    h5::write_attr(f, "/", "deck", text + "replaced");  // an existing attribute is replaced
  }
  const h5::File f = h5::File::open_read(path);
  EXPECT_EQ(h5::read_attr_string(f, "/", "deck"), text + "replaced");
  EXPECT_EQ(h5::read_attr_string(f, "/", "model"), "mlp");
  // Short texts keep the fixed-length string type they always had.
  EXPECT_EQ(stored_type(path, "model"), (std::pair<std::size_t, bool>{3, false}));
}

TEST(LongAttributes, RoundTripThroughAnInMemoryImage) {
  const std::string path = scratch("long_attr_image.h5");
  const std::string text = long_text(200000);
  {
    const h5::File f = h5::File::create_in_memory(path);
    h5::write_attr(f, "/", "config", text);
    write_file_atomically(path, f.image());
  }
  EXPECT_EQ(h5::read_attr_string(h5::File::open_read(path), "/", "config"), text);
}

TEST(LongAttributes, WeightsAndCheckpointsHoldADeckOver64KiB) {
  const std::string deck = long_text(100000);
  nn::ParameterStore<float> store = small_store();
  const std::string weights = scratch("long_attr_weights.h5");
  nn::write_weights(weights, store, {{"model", "mlp"}, {"deck", deck}, {"config", long_text(70000)}});
  nn::ParameterStore<float> back = small_store();
  const nn::Attributes attrs = nn::read_weights(weights, back);
  EXPECT_EQ(attrs.at("config"), long_text(70000));
  EXPECT_EQ(h5::read_attr_string(h5::File::open_read(weights), "/", "deck"), deck);
  EXPECT_EQ(attrs.at("model"), "mlp");

  const std::string dir = scratch("long_attr_ckpts");
  fs::remove_all(dir);
  optim::Optimizer<float> optimizer(optim::OptimizerConfig{}, store.count());
  CheckpointState state;
  state.global_step = 7;
  state.deck = deck;
  state.model_family = "mlp";
  state.model_config = long_text(70000);
  const std::string path = write_checkpoint(dir, 2, state, store, optimizer);
  const CheckpointState read = read_checkpoint(path, back, optimizer);
  EXPECT_EQ(read.deck, deck);
  EXPECT_EQ(read.model_config, state.model_config);
  EXPECT_EQ(read.global_step, 7u);
}
