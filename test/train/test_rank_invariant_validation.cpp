// rank_invariant validation (Note [rank-invariant validation] in src/train/evaluator.cpp): runs with a
// validation file, lr_schedule plateau, early stopping and best_output on 1, 2, ... ranks (the
// world's first p ranks: 1, 2 and 3 under `mpirun -np 3`) give the same validation metrics bit for
// bit (the last validation's doubles, and the val_ numbers and decisions of the metrics files byte
// for byte), the same weights and the same best weights; also with weighted rows. Validation's
// fused chunks (Note [fused validation]: the mlp classifier, weighted or not, an mlp regression with
// its RMSE mapped back, the denoiser, the resnet, cape) also against one micro-batch per chunk
// (rank_invariant_fuse false).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "core/rng.hpp"
#include "data/synthetic.hpp"
#include "io/hdf5.hpp"
#include "models/diffusion/downscaling.hpp"
#include "models/run_family.hpp"
#include "support/test_support.hpp"
#include "train/gbdt_run.hpp"
#include "train/overfit_run.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using hpct::test::make_deck;

namespace {

// 600 training rows, global batch 48 in chunks of 4 (1 x 48, 2 x 24, 3 x 16); 101 validation rows:
// 26 chunks, the last one of a single row, split 13/13 and 8/9/9 over ranks. A classifier: its
// per-row cross entropies are full doubles, so any other grouping of their sums changes the last
// bits (a regression's squared errors of floats near 10 are sums that double holds exactly).
constexpr std::uint64_t kRows = 600, kValRows = 101, kGlobalBatch = 48;

struct Run {
  TrainSummary summary;
  std::string metrics, output, best;
};

// The classifier's deck (data and validation files `data`, `val`).
std::string classifier_deck(const std::string& data, const std::string& val) {
  return "model mlp\ndata_file " + data + "\nvalidation_file " + val +
         "\nloss cross_entropy\nnum_classes 2\nhidden_sizes 64,64\nactivation relu\nepochs 10\nlr 0.05\n"
         "rank_invariant true\nrank_invariant_chunk 4\nlr_schedule plateau\nplateau_patience 0\n"
         "early_stopping_patience 4\n";
}

// The deck's run on the world's first p ranks (the others wait); files named after p and `name`
// under `dir`.
Run train_on(int p, const std::string& dir, const std::string& deck, const std::vector<std::string>& extra,
             const std::string& name = "") {
  Run run;
  const std::string tag = dir + "/p" + std::to_string(p) + name;
  run.metrics = tag + ".jsonl";
  run.output = tag + ".h5";
  run.best = tag + "_best.h5";
  const Comm world;
  MPI_Comm raw = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world.rank() < p ? 0 : MPI_UNDEFINED, world.rank(), &raw);
  if (raw != MPI_COMM_NULL) {
    const Comm comm(raw);
    std::vector<std::string> keys = {"batch_size=" + std::to_string(kGlobalBatch / static_cast<std::uint64_t>(p)),
                                     "metrics_file=" + run.metrics, "output=" + run.output,
                                     "best_output=" + run.best};
    keys.insert(keys.end(), extra.begin(), extra.end());
    try {  // an error on the p ranks (agreed among them) must not leave the others waiting
      NetworkTrainer t(make_deck(deck, keys), comm);
      run.summary = t.run();
    } catch (const std::exception& e) {
      ADD_FAILURE() << p << " ranks: " << e.what();
    }
    comm.barrier();
    MPI_Comm_free(&raw);
  }
  world.barrier();  // rank 0 has closed the files
  return run;
}

// Every "val_*", "best_*", "lr" and "epoch" field of every record of a metrics file, in order, as
// written (their decimal text): the validation numbers and what they decided.
std::string validation_fields(const std::string& path) {
  std::ifstream in(path);
  std::string out;
  const std::regex field("\"(type|epoch|lr|val_[a-z0-9_]*|best_[a-z_]*)\": [^,}]*");
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"type\": \"step\"") != std::string::npos) continue;  // the step lines hold no validation
    for (std::sregex_iterator m(line.begin(), line.end(), field), end; m != end; ++m) out += m->str() + " ";
    out += "\n";
  }
  return out;
}

// The doubles' bits (EXPECT_EQ on doubles would take -0 for +0).
std::vector<std::uint64_t> bits(const EvalResult& r) {
  std::vector<std::uint64_t> out;
  for (const auto& [spec, v] : r.metrics) {
    std::uint64_t u;
    std::memcpy(&u, &v, sizeof(u));
    out.push_back(u);
  }
  return out;
}

void expect_rank_invariant(const std::string& name, bool weighted) {
  // The weight_file keys are gbdt's, which the train program registers (apps/train.cpp).
  static const bool registered = [] {
    register_run_family(gbdt_run_family());
    return true;
  }();
  (void)registered;
  const Comm world;
  const std::string dir = test::empty_scratch_dir(world, name);
  const std::string data = test::scratch(name + "_data.h5"), val = test::scratch(name + "_val.h5");
  if (world.rank() == 0) {
    write_higgs_like(data, kRows, 5);
    write_higgs_like(val, kValRows, 11);
  }
  world.barrier();
  std::vector<std::string> keys;
  if (weighted) {  // weights in [0.1, 2.7], some rows 0
    if (world.rank() == 0) {
      std::ofstream w(dir + "/w.txt"), v(dir + "/v.txt");
      for (std::uint64_t i = 0; i < kRows; ++i) w << (i % 7 == 3 ? 0.0 : 0.1 + 0.37 * double(i % 8)) << "\n";
      for (std::uint64_t i = 0; i < kValRows; ++i) v << (i % 5 == 2 ? 0.0 : 0.3 + 0.29 * double(i % 9)) << "\n";
    }
    world.barrier();
    keys = {"weight_file=" + dir + "/w.txt", "validation_weight_file=" + dir + "/v.txt"};
  }
  const std::string deck = classifier_deck(data, val);
  const Run one = train_on(1, dir, deck, keys);
  std::vector<std::string> unfused_keys = keys;
  unfused_keys.push_back("rank_invariant_fuse=false");
  const Run unfused = train_on(1, dir, deck, unfused_keys, "_unfused");
  if (world.rank() == 0) {  // EXPECT: every rank goes on to the same collectives
    EXPECT_FALSE(one.summary.val.metrics.empty());
    EXPECT_FALSE(test::metrics_field(one.metrics, "plateau", "lr").empty()) << "the rate never dropped";
    EXPECT_EQ(bits(unfused.summary.val), bits(one.summary.val)) << "one micro-batch per chunk";
    EXPECT_EQ(validation_fields(unfused.metrics), validation_fields(one.metrics)) << "one micro-batch per chunk";
    EXPECT_EQ(test::weight_tensors(unfused.best), test::weight_tensors(one.best)) << "one micro-batch per chunk";
  }
  for (int p = 2; p <= world.size(); ++p) {
    const Run run = train_on(p, dir, deck, keys);
    if (world.rank() != 0) continue;
    EXPECT_EQ(bits(run.summary.val), bits(one.summary.val)) << p << " ranks: the last validation's metrics";
    EXPECT_EQ(run.summary.early_stopped_after, one.summary.early_stopped_after) << p << " ranks";
    EXPECT_EQ(validation_fields(run.metrics), validation_fields(one.metrics)) << p << " ranks: " << run.metrics;
    EXPECT_EQ(test::weight_tensors(run.output), test::weight_tensors(one.output)) << p << " ranks";
    EXPECT_EQ(test::weight_tensors(run.best), test::weight_tensors(one.best)) << p << " ranks";
  }
}

// A small image set for the resnet as data_format hdf5_images reads it: images [rows, 3, 16, 16]
// of full-mantissa normal values (so the kernels' summation orders show in the bits), labels of 5
// classes.
void write_images(const std::string& path, std::uint64_t rows, std::uint64_t seed) {
  std::vector<float> x(rows * 3 * 16 * 16);
  std::vector<long long> y(rows);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng::normal(rng::hash(seed, i)));
  for (std::uint64_t r = 0; r < rows; ++r) y[r] = static_cast<long long>(rng::hash(seed + 1, r) % 5);
  const h5::File f = h5::File::create(path);
  h5::write(f, "images", {rows, 3, 16, 16}, x.data());
  h5::write(f, "labels", {rows}, y.data());
}

// Episodes for model cape as data_format hdf5_fields reads them: "images" [rows, 3 views x 3
// channels, 32, 32] of normal values and "keypoints" [rows, 3, 4, 3] (x, y in (0.05, 0.95), the last
// slot invisible).
void write_episodes(const std::string& path, std::uint64_t rows, std::uint64_t seed) {
  std::vector<float> x(rows * 9 * 32 * 32), kp(rows * 3 * 4 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(rng::normal(rng::hash(seed, i)));
  for (std::size_t i = 0; i < kp.size(); ++i)
    kp[i] = i % 3 == 2 ? ((i / 3) % 4 == 3 ? 0.f : 1.f)
                       : static_cast<float>(0.05 + 0.9 * rng::uniform(rng::hash(seed + 1, i)));
  const h5::File f = h5::File::create(path);
  h5::write(f, "images", {rows, 9, 32, 32}, x.data());
  h5::write(f, "keypoints", {rows, 3, 4, 3}, kp.data());
}

enum class Fused { denoiser, regression, resnet, cape };

// The deck's model keys for each kind.
std::string fused_model_keys(Fused kind) {
  switch (kind) {
    case Fused::denoiser:
      return "model diffusion\ninputs_dataset context\ntargets_dataset fine\ndiffusion_hidden 32\n"
             "time_embedding_dim 8\ndiffusion_depth 1\ndiffusion_steps 20\nepochs 3\n";
    case Fused::regression: return "model mlp\nloss mse\nhidden_sizes 32,32\nepochs 3\n";
    case Fused::resnet:
      return "model resnet\ndata_format hdf5_images\nloss cross_entropy\nnum_classes 5\ntop_k 2\n"
             "resnet_width 16\nresnet_stem small\nepochs 2\n";
    case Fused::cape:
      return "model cape\ndata_format hdf5_fields\nfields images, keypoints\nresnet_width 4\ncape_dim 16\nepochs "
             "2\n";
  }
  return "";
}

// 1 x 48 runs 12 chunks a validation micro-batch, 2 x 24 six, 3 x 16 four, so a rank's last
// micro-batch holds fewer chunks, and the last of these one row; all against 1 x 48 with one
// micro-batch per chunk. The denoiser (rows_independent: training fuses too), an mlp regression
// (mse on a standardised label, its RMSE mapped back to the label's units) or a ResNet-18 (its
// batch norms on running statistics, Note [fused conv validation]; on the default convolutions,
// oneDNN's with blocked activations where the build has it: width 16, 16x16 images) or cape (its
// default gemm convolutions, width 4; episodes of 3 views of 32x32); 96 training rows for these two,
// so the 2 epochs stay short.
void expect_fused_as_unfused(const std::string& name, Fused kind) {
  const Comm world;
  const std::string dir = test::empty_scratch_dir(world, name);
  const std::string data = test::scratch(name + "_data.h5"), val = test::scratch(name + "_val.h5");
  if (world.rank() == 0) {
    if (kind == Fused::denoiser) {
      write_downscaling(data, kRows, 5);
      write_downscaling(val, kValRows, 11);
    } else if (kind == Fused::regression) {
      write_friedman1(data, kRows, 6, 1.0, 5);
      write_friedman1(val, kValRows, 6, 1.0, 11);
    } else if (kind == Fused::resnet) {
      write_images(data, 96, 5);
      write_images(val, kValRows, 11);
    } else {
      write_episodes(data, 96, 5);
      write_episodes(val, kValRows, 11);
    }
  }
  world.barrier();
  const std::string model = fused_model_keys(kind);
  const std::string deck = model + "data_file " + data + "\nvalidation_file " + val +
                           "\nseed 5\nrank_invariant true\nrank_invariant_chunk 4\n";
  const Run unfused = train_on(1, dir, deck, {"rank_invariant_fuse=false"}, "_unfused");
  if (world.rank() == 0) {
    EXPECT_FALSE(unfused.summary.val.metrics.empty());
  }
  for (int p = 1; p <= world.size(); ++p) {
    const Run run = train_on(p, dir, deck, {});
    if (world.rank() != 0) continue;
    EXPECT_EQ(bits(run.summary.val), bits(unfused.summary.val)) << p << " ranks, fused: the last validation";
    EXPECT_EQ(validation_fields(run.metrics), validation_fields(unfused.metrics)) << p << " ranks: " << run.metrics;
    EXPECT_EQ(test::weight_tensors(run.output), test::weight_tensors(unfused.output)) << p << " ranks";
  }
}

}  // namespace

TEST(RankInvariantValidation, MultiRank_SameMetricsOnEveryRankCount) { expect_rank_invariant("riv", false); }

TEST(RankInvariantValidation, MultiRank_WeightedRows) { expect_rank_invariant("riv_w", true); }

TEST(RankInvariantValidation, MultiRank_FusedDenoiserAsUnfused) {
  expect_fused_as_unfused("riv_diff", Fused::denoiser);
}

TEST(RankInvariantValidation, MultiRank_FusedRegressionAsUnfused) {
  expect_fused_as_unfused("riv_reg", Fused::regression);
}

TEST(RankInvariantValidation, MultiRank_FusedResNetAsUnfused) {
  expect_fused_as_unfused("riv_resnet", Fused::resnet);
}

TEST(RankInvariantValidation, MultiRank_FusedCapeAsUnfused) { expect_fused_as_unfused("riv_cape", Fused::cape); }
