// Typed data sources end to end, image part (same test binary as test_data_sources.cpp):
// hdf5_images reads float32 and uint8 images (uint8 scaled by 1/255, [N, H, W] as one channel) with
// int64 labels, also through the epoch shard; its errors name file and dataset, and a label outside
// the mlp's classes names file, dataset and row in every data_cache mode; data_format auto picks the
// source (text tables by extension); per-channel statistics of an image field equal a direct
// computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "data/data_sources_support.hpp"
#include "data/epoch_shard.hpp"
#include "data/source_registry.hpp"
#include "support/test_support.hpp"
#include "train/data_stats.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

// An image set of `rows` rows: uint8 pixels [rows, 6, 7] = 37 i mod 256 (0 and 255 among them)
// and int32 class labels 9 - r % 10 (10 at `bad_label_row`), under the names `pixels` and `classes`;
// and the table of what the source must show (inputs float32 [1, 6, 7] = pixel / 255, targets int64).
Table byte_images(const Comm& comm, const std::string& path, std::uint64_t rows, long long bad_label_row = -1) {
  std::vector<std::uint8_t> x(rows * 42);
  std::vector<int> y(rows);
  Table t;
  t.rows = rows;
  t.fields = {{"inputs", DType::f32, {1, 6, 7}, false, {}, {}}, {"targets", DType::i64, {}, false, {}, {}}};
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<std::uint8_t>((37 * i) % 256);
    t.fields[0].values.push_back(static_cast<float>(x[i]) / 255.0f);  // the source's scaling, in float
  }
  for (std::uint64_t r = 0; r < rows; ++r) {
    y[r] = static_cast<long long>(r) == bad_label_row ? 10 : 9 - static_cast<int>(r % 10);
    t.fields[1].values.push_back(y[r]);
  }
  if (comm.rank() == 0) {
    const h5::File f = h5::File::create(path);
    h5::write(f, "pixels", {rows, 6, 7}, x.data());
    h5::write(f, "classes", {rows}, y.data());
  }
  comm.barrier();
  return t;
}

// float32 images [rows, 3, 4, 5], channel c drawn from N(mean[c], scale[c]), and int64 labels r % 10.
std::vector<float> float_images(const Comm& comm, const std::string& path, std::uint64_t rows) {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float mean[3] = {-2.0f, 0.5f, 10.0f}, scale[3] = {0.5f, 3.0f, 1.0f};
  std::vector<float> x(rows * 60);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = mean[(i / 20) % 3] + scale[(i / 20) % 3] * normal(rng);
  std::vector<long long> y(rows);
  for (std::uint64_t r = 0; r < rows; ++r) y[r] = static_cast<long long>(r % 10);
  if (comm.rank() == 0) {
    const h5::File f = h5::File::create(path);
    h5::write(f, "images", {rows, 3, 4, 5}, x.data());
    h5::write(f, "labels", {rows}, y.data());
  }
  comm.barrier();
  return x;
}

template <class T>
std::vector<double> as_doubles(const std::uint32_t* words, std::size_t n) {
  const T* v = reinterpret_cast<const T*>(words);
  return std::vector<double>(v, v + n);
}

}  // namespace

TEST(DataSources, ImageSetsReadAsFloatWithInt64Labels) {
  const Comm comm;
  // float32 [N, C, H, W] with int64 labels: the values as stored.
  const std::string floats = scratch("sources_images_f32.h5");
  const std::vector<float> fx = float_images(comm, floats, 12);
  const auto f = open_as("data_format hdf5_images\n", floats);
  ASSERT_EQ(f->rows(), 12u);
  std::vector<FieldSpec> specs = f->fields();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].describe(), "inputs: float32 [N, 3, 4, 5]");
  EXPECT_EQ(specs[1].describe(), "targets: int64 [N]");
  const HostFields all(specs, 12, {0, 0});
  EXPECT_EQ(f->read_block(0, 12, all.buffers()), kNoBadValue);
  EXPECT_EQ(as_doubles<float>(all.words(0), fx.size()), std::vector<double>(fx.begin(), fx.end()));
  const std::vector<double> labels = as_doubles<std::int64_t>(all.words(1), 12);
  for (std::size_t r = 0; r < 12; ++r) EXPECT_EQ(labels[r], double(r % 10));
  const HostFields some(specs, 3, {0, 0});
  f->read_rows({1, 4, 11}, some.buffers());
  const std::vector<double> x = as_doubles<float>(some.words(0), 180);
  EXPECT_EQ(x[0], fx[60]);
  EXPECT_EQ(x[60 + 59], fx[4 * 60 + 59]);
  EXPECT_EQ(x[120], fx[11 * 60]);
  EXPECT_EQ(as_doubles<std::int64_t>(some.words(1), 3), (std::vector<double>{1, 4, 1}));

  // uint8 [N, H, W]: one channel, scaled by 1 / 255; int32 labels read as int64; dataset names from
  // the deck. Through the epoch shard in every mode, as training sees them.
  const std::string bytes = scratch("sources_images_u8.h5");
  const Table t = byte_images(comm, bytes, 10);
  const auto u = open_as("data_format hdf5_images\nimages_dataset pixels\nlabels_dataset classes\n", bytes);
  specs = u->fields();
  EXPECT_EQ(specs[0].describe(), "inputs: float32 [N, 1, 6, 7]");
  EXPECT_EQ(specs[1].describe(), "targets: int64 [N]");
  EXPECT_EQ(u->describe_row(3, 0), bytes + ": dataset 'pixels': row 3");
  EXPECT_EQ(u->describe_row(3, 1), bytes + ": dataset 'classes': row 3");
  const std::vector<double>& scaled = t.fields[0].values;
  EXPECT_EQ(*std::min_element(scaled.begin(), scaled.end()), 0.0);
  EXPECT_EQ(*std::max_element(scaled.begin(), scaled.end()), 1.0);
  const EpochOrder sampler(10, 3, 1, 1, 4, true);
  for (const ShardOptions& opt :
       {options(DataCache::stream, false), options(DataCache::stream, true), options(DataCache::memory, true)}) {
    EpochShard shard(u, sampler, 0, opt);
    for (std::uint64_t epoch = 0; epoch < 2; ++epoch) {
      ASSERT_EQ(shard.load(epoch), kNoBadValue);
      const auto perm = sampler.permutation(epoch);
      for (std::uint64_t step = 0; step < sampler.steps_per_epoch(); ++step) {
        const auto slice = sampler.slice(step, 0, 0);
        const std::vector<std::uint64_t> ids(perm.begin() + static_cast<std::ptrdiff_t>(slice.first),
                                             perm.begin() + static_cast<std::ptrdiff_t>(slice.second));
        Batch b;
        shard.fill(b, step, 0);
        expect_same(seen(b), expected(t, ids, ids), "uint8 images, step " + std::to_string(step));
      }
    }
  }
}

TEST(DataSources, ImageSetErrorsNameFileAndDataset) {
  const Comm comm;
  struct Case {
    const char* name;
    std::vector<std::uint64_t> image_dims, label_dims;
    bool float_labels;
    std::string message;  // after "<file>: "
  };
  const std::vector<Case> cases = {
      {"rank", {8, 12}, {8}, false, "dataset 'images' must be [N, C, H, W] or [N, H, W], has rank 2"},
      {"float_labels", {8, 4, 4}, {8}, true, "dataset 'labels' must hold integer class labels [N]"},
      {"label_columns", {8, 4, 4}, {8, 2}, false, "dataset 'labels' must hold integer class labels [N]"},
      {"rows", {8, 2, 4, 4}, {7}, false, "datasets 'images' and 'labels' have different row counts (8 vs 7)"}};
  for (const Case& c : cases) {
    const std::string path = scratch(std::string("sources_image_error_") + c.name + ".h5");
    if (comm.rank() == 0) {
      const h5::File f = h5::File::create(path);
      std::uint64_t n = 1, m = 1;
      for (std::uint64_t d : c.image_dims) n *= d;
      for (std::uint64_t d : c.label_dims) m *= d;
      const std::vector<float> x(n, 0.5f), fy(m, 1.0f);
      const std::vector<long long> y(m, 1);
      h5::write(f, "images", c.image_dims, x.data());
      if (c.float_labels) h5::write(f, "labels", c.label_dims, fy.data());
      else h5::write(f, "labels", c.label_dims, y.data());
    }
    comm.barrier();
    EXPECT_EQ(error_message([&] { open_as("data_format hdf5_images\n", path); }), path + ": " + c.message)
        << c.name;
    // The trainer reports it as it is (agreed over ranks).
    EXPECT_EQ(train_error("data_format hdf5_images\nloss cross_entropy\nnum_classes 3\ndata_file " + path + "\n"),
              path + ": " + c.message)
        << c.name;
  }
}

// The mlp narrows integer labels to [0, num_classes) (Model::constrain_fields): a label outside is
// named by file, dataset and row in every data_cache mode, in the training and the validation part.
TEST(DataSources, ImageLabelsOutsideTheClassesAreNamedInEveryMode) {
  const Comm comm;
  for (const long long row : {7, 37}) {  // 40 rows, validation_fraction 0.2: rows 32..39 validate
    const std::string path = scratch("sources_images_bad_label_" + std::to_string(row) + ".h5");
    byte_images(comm, path, 40, row);
    for (const std::string& mode : kModes)
      EXPECT_EQ(train_error("data_format hdf5_images\nimages_dataset pixels\nlabels_dataset classes\n"
                            "loss cross_entropy\nnum_classes 10\nhidden_sizes 8\nbatch_size 4\nepochs 2\n"
                            "validation_fraction 0.2\ndata_file " +
                            path + "\n" + mode),
                path + ": dataset 'classes': row " + std::to_string(row) +
                    " holds a value outside [0, 9] (first bad row" +
                    (row < 32 ? " of the training split: the first 32 rows of data_file)"
                              : " of the validation split: the last 8 rows of data_file, validation_fraction 0.2)"))
          << mode;
  }
}

TEST(DataSources, DataFormatAutoPicksTheSourceByExtensionAndContent) {
  const Comm comm;
  const std::string images = scratch("sources_auto_images.h5");
  float_images(comm, images, 4);
  const std::string table = friedman_file(comm, "sources_auto_table", 40);
  const auto pick = [](const std::string& lines, const std::string& path) {
    return std::string(data_source_for(make_deck(lines + "data_file " + path + "\n"), path, "data_file").name);
  };
  EXPECT_EQ(pick("", images), "hdf5_images");
  EXPECT_EQ(pick("data_format auto\n", table), "hdf5");
  EXPECT_EQ(pick("fields inputs, targets\n", table), "hdf5_fields");
  EXPECT_EQ(pick("fields images, labels\n", images), "hdf5_fields");  // `fields` set: the user's fields
  EXPECT_EQ(pick("data_format hdf5\n", images), "hdf5");              // an explicit format wins
  EXPECT_EQ(open_as("fields images, labels\n", images)->fields()[0].describe(), "images: float32 [N, 3, 4, 5]");
  EXPECT_EQ(pick("", "table.csv"), "csv");  // text tables are sources like any other
  EXPECT_EQ(pick("", "binary.train"), "tsv");
  EXPECT_EQ(pick("", "sparse.svm"), "libsvm");
  EXPECT_EQ(error_message([&] { pick("", "table.dat"); }),
            "test.in:1: data_file: table.dat: data_format auto does not recognise this file; set data_format");
}

TEST(DataSources, PerChannelStatisticsOfAnImageFieldEqualADirectComputation) {
  const Comm comm;
  const std::string path = scratch("sources_stats_images.h5");
  const std::uint64_t rows = 40;
  const std::vector<float> x = float_images(comm, path, rows);
  const DataStats s = compute_data_stats(*open_as("data_format hdf5_images\n", path), comm,
                                         {{"inputs", StatsGranularity::channel},
                                          {"inputs", StatsGranularity::column}});
  EXPECT_EQ(s.rows, rows);
  ASSERT_EQ(s.fields.size(), 2u);
  // groups: 3 channels of 20 values, or 60 columns of 1, in each row
  for (const auto& [k, per] : std::vector<std::pair<std::size_t, std::size_t>>{{0, 20}, {1, 1}}) {
    const FieldStats& f = s.fields[k];
    ASSERT_EQ(f.mean.size(), 60 / per);
    ASSERT_EQ(f.std.size(), 60 / per);
    for (std::size_t g = 0; g < 60 / per; ++g) {
      double sum = 0, sq = 0;
      for (std::uint64_t r = 0; r < rows; ++r)
        for (std::size_t j = g * per; j < (g + 1) * per; ++j) sum += x[r * 60 + j];
      const double mean = sum / double(rows * per);
      for (std::uint64_t r = 0; r < rows; ++r)
        for (std::size_t j = g * per; j < (g + 1) * per; ++j) sq += (x[r * 60 + j] - mean) * (x[r * 60 + j] - mean);
      EXPECT_NEAR(f.mean[g], mean, 1e-12 * (1 + std::fabs(mean))) << "group " << g << " of request " << k;
      EXPECT_NEAR(f.std[g], std::sqrt(sq / double(rows * per)), 1e-12) << "group " << g << " of request " << k;
    }
  }
}
