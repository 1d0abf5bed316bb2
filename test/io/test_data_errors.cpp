// Weights round trip through HDF5, and every bad-data case: each must give the same clear error on
// every rank (run at 1 and 2 ranks; a hang would time the test out).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/hdf5.hpp"
#include "models/mlp/mlp.hpp"
#include "nn/weights_io.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::error_message;
using hpct::test::make_deck;
using hpct::test::scratch;

namespace {

// Rank 0 writes an HDF5 file with the given float datasets; all ranks wait for it.
void write_file(const Comm& comm, const std::string& path,
                const std::vector<std::pair<std::string, std::vector<std::uint64_t>>>& datasets,
                std::uint64_t nan_row = ~0ull, const std::string& nan_dataset = "") {
  if (comm.rank() == 0) {
    const h5::File f = h5::File::create(path);
    for (const auto& [name, dims] : datasets) {
      std::uint64_t n = 1;
      for (auto d : dims) n *= d;
      std::vector<float> v(n);
      for (std::uint64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 17) * 0.1f;
      if (name == nan_dataset) {
        const std::uint64_t cols = dims.size() > 1 ? dims[1] : 1;
        v[nan_row * cols + cols - 1] = std::numeric_limits<float>::quiet_NaN();
      }
      h5::write(f, name, dims, v.data());
    }
  }
  comm.barrier();
}

std::string train_error(const std::string& deck_text) {
  const Comm comm;
  const deck::Deck deck = make_deck(deck_text);
  return error_message([&] {
    NetworkTrainer t(deck, comm);
    t.run();
  });
}

}  // namespace

TEST(Weights, RoundTripKeepsEveryBitAndPyTorchNames) {
  MlpConfig cfg{5, 2, {7, 3}, nn::Activation::gelu};
  Mlp<float> a(cfg, 4), b(cfg, 4);
  a.store().initialize(123);
  b.store().initialize(999);
  const std::string path = scratch("weights_" + std::to_string(Comm().rank()) + ".h5");
  nn::write_weights(path, a.store(), {{"model", "mlp"}, {"config", "test"}});
  const nn::Attributes attrs = nn::read_weights(path, b.store());
  EXPECT_EQ(attrs.at("model"), "mlp");
  auto pa = to_host(a.store().params()), pb = to_host(b.store().params());
  for (std::size_t i = 0; i < pa.extent(0); ++i) ASSERT_EQ(pa(i), pb(i)) << i;
  const h5::File f = h5::File::open_read(path);
  EXPECT_EQ(h5::list_datasets(f), (std::vector<std::string>{"fc0/bias", "fc0/weight", "fc1/bias", "fc1/weight",
                                                            "fc2/bias", "fc2/weight"}));
  EXPECT_EQ(h5::info(f, "fc0/weight").dims, (std::vector<std::uint64_t>{7, 5}));  // [out, in]
}

TEST(Weights, ShapeMismatchAndMissingTensorNameTheDataset) {
  MlpConfig small{5, 2, {7}, nn::Activation::relu}, wide{5, 2, {8}, nn::Activation::relu},
      deep{5, 2, {7, 7}, nn::Activation::relu};
  Mlp<float> a(small, 1), b(wide, 1), c(deep, 1);
  a.store().initialize(1);
  const std::string path = scratch("weights_small_" + std::to_string(Comm().rank()) + ".h5");
  nn::write_weights(path, a.store(), {});
  EXPECT_EQ(error_message([&] { nn::read_weights(path, b.store()); }),
            path + ": dataset 'fc0/weight' has shape 7x5, the model needs 8x5");
  EXPECT_EQ(error_message([&] { nn::read_weights(path, c.store()); }),
            path + ": dataset 'fc1/weight' has shape 2x7, the model needs 7x7");
}

TEST(DataErrors, MissingFile) {
  EXPECT_EQ(train_error("data_file no_such_file.h5\nepochs 1\n"),
            "no_such_file.h5: cannot open (No such file or directory)");
}

TEST(DataErrors, NotAnHdf5File) {
  const Comm comm;
  const std::string path = scratch("not_hdf5.h5");
  if (comm.rank() == 0) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("just text\n", f);
    std::fclose(f);
  }
  comm.barrier();
  EXPECT_EQ(train_error("data_file " + path + "\n"),
            path + ": not a readable HDF5 file (truncated or another format?)");
}

TEST(DataErrors, MissingDataset) {
  const Comm comm;
  const std::string path = scratch("missing_ds.h5");
  write_file(comm, path, {{"inputs", {20, 3}}, {"y", {20, 1}}});
  EXPECT_EQ(train_error("data_file " + path + "\n"), path + ": dataset 'targets' not found");
  EXPECT_EQ(train_error("data_file " + path + "\ntargets_dataset y\ninputs_dataset x\n"),
            path + ": dataset 'x' not found");
}

TEST(DataErrors, WrongRank) {
  const Comm comm;
  const std::string path = scratch("wrong_rank.h5");
  write_file(comm, path, {{"inputs", {20, 3, 2}}, {"targets", {20, 1}}});
  EXPECT_EQ(train_error("data_file " + path + "\n"),
            path + ": dataset 'inputs' must be 2-D [N, features], has rank 3");
}

TEST(DataErrors, RowCountMismatch) {
  const Comm comm;
  const std::string path = scratch("n_mismatch.h5");
  write_file(comm, path, {{"inputs", {20, 3}}, {"targets", {19, 1}}});
  EXPECT_EQ(train_error("data_file " + path + "\n"),
            path + ": datasets 'inputs' and 'targets' have different row counts (20 vs 19)");
}

TEST(DataErrors, IntegerData) {
  const Comm comm;
  const std::string path = scratch("int_data.h5");
  if (comm.rank() == 0) {
    const h5::File f = h5::File::create(path);
    std::vector<int> v(20 * 3, 1);
    h5::write(f, "inputs", {20, 3}, v.data());
    h5::write(f, "targets", {20, 1}, v.data());
  }
  comm.barrier();
  EXPECT_EQ(train_error("data_file " + path + "\n"), path + ": dataset 'inputs' must be float32 or float64");
}

TEST(DataErrors, NanInTrainingRowsNamesTheFirstBadRow) {
  const Comm comm;
  const std::string path = scratch("nan_train.h5");
  write_file(comm, path, {{"inputs", {40, 3}}, {"targets", {40, 1}}}, 13, "inputs");
  // Rows 0..35 train, 36..39 validate; row 13 is read by whichever rank draws it.
  EXPECT_EQ(train_error("data_file " + path + "\nbatch_size 4\nepochs 1\n"),
            path +
                ": dataset 'inputs': row 13 holds a NaN or Inf (first bad row of the training split: the first 36 "
                "rows of data_file)");
  // With a validation_file, data_file is the training split, every row of it.
  const std::string val = scratch("clean_val.h5");
  write_file(comm, val, {{"inputs", {8, 3}}, {"targets", {8, 1}}});
  EXPECT_EQ(train_error("data_file " + path + "\nvalidation_file " + val + "\nbatch_size 4\nepochs 1\n"),
            path +
                ": dataset 'inputs': row 13 holds a NaN or Inf (first bad row of the training split: data_file)");
}

// A bad row among the validation rows says so (they are checked first: a user would take it for the
// data's first bad row), with its row in the file: data_file's tail, or validation_file.
TEST(DataErrors, NanInValidationTargetsNamesTheValidationSplit) {
  const Comm comm;
  const std::string path = scratch("nan_val.h5");
  write_file(comm, path, {{"inputs", {40, 3}}, {"targets", {40, 1}}}, 38, "targets");
  EXPECT_EQ(train_error("data_file " + path + "\nbatch_size 4\n"),
            path +
                ": dataset 'targets': row 38 holds a NaN or Inf (first bad row of the validation split: the "
                "last 4 rows of data_file, validation_fraction 0.1)");
  const std::string train = scratch("clean_train.h5");
  write_file(comm, train, {{"inputs", {40, 3}}, {"targets", {40, 1}}});
  EXPECT_EQ(train_error("data_file " + train + "\nvalidation_file " + path + "\nbatch_size 4\n"),
            path +
                ": dataset 'targets': row 38 holds a NaN or Inf (first bad row of the validation split: "
                "validation_file)");
}

TEST(DataErrors, ValidationFileWithOtherWidths) {
  const Comm comm;
  const std::string a = scratch("val_a.h5"), b = scratch("val_b.h5");
  write_file(comm, a, {{"inputs", {20, 3}}, {"targets", {20, 1}}});
  write_file(comm, b, {{"inputs", {10, 4}}, {"targets", {10, 1}}});
  EXPECT_EQ(train_error("data_file " + a + "\nvalidation_file " + b + "\n"),
            "test.in:2: validation_file: " + b + " has 4 inputs and 1 targets per row, " + a + " has 3 and 1");
}

TEST(DataErrors, InitWeightsOfAnotherShape) {
  const Comm comm;
  const std::string data = scratch("init_data.h5"), weights = scratch("init_weights.h5");
  write_file(comm, data, {{"inputs", {20, 3}}, {"targets", {20, 1}}});
  if (comm.rank() == 0) {
    Mlp<float> other(MlpConfig{3, 1, {5}, nn::Activation::relu}, 1);
    nn::write_weights(weights, other.store(), {});
  }
  comm.barrier();
  EXPECT_EQ(train_error("data_file " + data + "\nhidden_sizes 6\ninit_weights " + weights + "\n"),
            weights + ": dataset 'fc0/weight' has shape 5x3, the model needs 6x3");
}
