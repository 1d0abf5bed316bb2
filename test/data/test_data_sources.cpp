// Typed data sources end to end, fields part: every data_cache mode shows exactly the expected rows
// of a data set with a ragged int64, an int32 and a [2, 3] float field (values, per-micro-batch
// ragged offsets, ids), and so do the evaluator's and the trainer's batches; ragged offset tables
// that do not add up; bad values (NaN, a value outside a model's range, an index outside its graph)
// named by file, dataset and row the same way in every mode; statistics beside a ragged field.
// Image sets, data_format auto and per-channel statistics: test_image_sources.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "data/data_sources_support.hpp"
#include "data/epoch_shard.hpp"
#include "data/source_registry.hpp"
#include "support/test_support.hpp"
#include "train/data_stats.hpp"
#include "train/evaluator.hpp"
#include "train/trainer.hpp"

using namespace hpct;
using namespace hpct::test;

namespace {

const bool kProbeRegistered = register_probe_family();

// Row r (values shifted by `base`): "tokens" int64 ragged, r % 5 elements (empty rows too) of [2],
// element k = (1000 r + 10 k, 1000 r + 10 k + 1); "label" int32 = 7 r - 300; "grid" float32 [2, 3]
// = r + j / 8 (exact). With `graph`: "nodes" float32 ragged [V, 3], 1 + r % 3 nodes, and "edges"
// int64 ragged [E, 2], r % 4 edges (k % V, (k + 1) % V) between them.
Table fields_table(std::uint64_t rows, bool graph = false, long long base = 0) {
  Table t;
  t.rows = rows;
  TableField tokens{"tokens", DType::i64, {2}, true, {}, {0}}, label{"label", DType::i32, {}, false, {}, {}},
      grid{"grid", DType::f32, {2, 3}, false, {}, {}}, nodes{"nodes", DType::f32, {3}, true, {}, {0}},
      edges{"edges", DType::i64, {2}, true, {}, {0}};
  for (std::uint64_t u = 0; u < rows; ++u) {
    const long long r = static_cast<long long>(u) + base;
    for (long long k = 0; k < static_cast<long long>(u % 5); ++k)
      tokens.values.insert(tokens.values.end(), {double(1000 * r + 10 * k), double(1000 * r + 10 * k + 1)});
    tokens.offsets.push_back(static_cast<long long>(tokens.values.size() / 2));
    label.values.push_back(double(7 * r - 300));
    for (int j = 0; j < 6; ++j) grid.values.push_back(double(r) + j / 8.0);
    const long long v = 1 + static_cast<long long>(u % 3);
    for (long long k = 0; k < 3 * v; ++k) nodes.values.push_back(double(r) + k / 4.0);
    nodes.offsets.push_back(static_cast<long long>(nodes.values.size() / 3));
    for (long long k = 0; k < static_cast<long long>(u % 4); ++k)
      edges.values.insert(edges.values.end(), {double(k % v), double((k + 1) % v)});
    edges.offsets.push_back(static_cast<long long>(edges.values.size() / 2));
  }
  t.fields = {tokens, label, grid};
  if (graph) t.fields.insert(t.fields.end(), {nodes, edges});
  return t;
}

const std::string kFields = "data_format hdf5_fields\nfields tokens, label, grid\n";
const std::string kGraphFields = "data_format hdf5_fields\nfields tokens, label, grid, nodes, edges\n";


}  // namespace

TEST(DataSources, EveryModeShowsTheExpectedRowsOfEveryField) {
  const Comm comm;
  if (comm.rank() != 0) return;  // a single-process test: the sampler's ranks are simulated
  const Table t = fields_table(140);
  const std::string path = written(Comm(MPI_COMM_SELF), t, "sources_rows");
  const std::uint64_t first_row = 9, rows = 117;  // a part that does not start at row 0
  const std::shared_ptr<const Dataset> data = row_range(open_as(kFields, path), first_row, rows);
  const std::vector<FieldSpec> specs = data->fields();
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].describe(), "tokens: int64 ragged [E, 2]");
  EXPECT_EQ(specs[1].describe(), "label: int32 [N]");
  EXPECT_EQ(specs[2].describe(), "grid: float32 [N, 2, 3]");
  EXPECT_EQ(specs[0].max_row_elements, 4u);
  // 3 ranks x batch 5 x 2 micro-steps (dense rows: block reads, a partial last step); 12 ranks x
  // batch 2 (sparse rows: row selections); shuffle off (read once).
  const EpochOrder three(rows, 5, 3, 2, 11, true), twelve(rows, 2, 12, 1, 5, true), fixed(rows, 4, 2, 1, 3, false);
  const std::vector<std::pair<ShardOptions, bool>> modes = {{options(DataCache::stream, false), false},
                                                            {options(DataCache::stream, true), false},
                                                            {options(DataCache::memory, false), true},
                                                            {options(DataCache::automatic, true), true},
                                                            {options(DataCache::automatic, true, 0), false}};
  for (const auto& [sampler, rank] :
       std::vector<std::pair<EpochOrder, int>>{{three, 0}, {three, 2}, {twelve, 0}, {twelve, 11}, {fixed, 1}}) {
    for (const auto& [opt, holds] : modes) {
      EpochShard shard(data, sampler, rank, opt);
      EXPECT_EQ(shard.holds_part(), holds && sampler.shuffled());
      for (std::uint64_t epoch = 0; epoch < 4; ++epoch) {
        ASSERT_EQ(shard.load(epoch), kNoBadValue);
        const std::vector<std::uint64_t> perm = sampler.permutation(epoch);
        for (std::uint64_t step = 0; step < sampler.steps_per_epoch(); ++step)
          for (int micro = 0; micro < sampler.accumulation(); ++micro) {
            std::vector<std::uint64_t> ids, file_rows;
            const auto slice = sampler.slice(step, micro, rank);
            for (std::uint64_t p = slice.first; p < slice.second; ++p) {
              ids.push_back(perm[p]);
              file_rows.push_back(first_row + perm[p]);
            }
            Batch b;
            shard.fill(b, step, micro);
            expect_same(seen(b), expected(t, file_rows, ids),
                        "rank " + std::to_string(rank) + " epoch " + std::to_string(epoch) + " step " +
                            std::to_string(step) + " micro " + std::to_string(micro) + " holds " +
                            std::to_string(shard.holds_part()) + " prefetch " + std::to_string(opt.prefetch));
            if (HasFailure()) return;
          }
      }
    }
  }
}

TEST(DataSources, TheEvaluatorsBatchesCarryEveryField) {
  const Comm comm;
  const Table t = fields_table(150);
  const std::string path = written(comm, t, "sources_eval");
  const std::uint64_t first_row = 100, rows = 50, batch = 6;
  const Evaluator evaluator(row_range(open_as(kFields, path), first_row, rows), comm, batch, 1);
  ProbeModel probe;
  EXPECT_EQ(evaluator.evaluate(probe).loss, 1.0);  // every row once, over all ranks
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = rows * r / p, count = rows * (r + 1) / p - first;
  ASSERT_EQ(probe.evaluated.size(), (count + batch - 1) / batch);
  for (std::size_t k = 0; k < probe.evaluated.size(); ++k) {
    std::vector<std::uint64_t> ids, file_rows;
    for (std::uint64_t i = k * batch; i < std::min(count, (k + 1) * batch); ++i) {
      ids.push_back(first + i);
      file_rows.push_back(first_row + first + i);
    }
    expect_same(probe.evaluated[k], expected(t, file_rows, ids), "micro-batch " + std::to_string(k));
    EXPECT_EQ(probe.evaluated[k].epoch, Evaluator::kValidationEpoch);
  }
}

TEST(DataSources, TheTrainersBatchesCarryEveryFieldInEveryMode) {
  const Comm comm;
  probe_checks() = {};
  const Table train = fields_table(90, true), val = fields_table(31, true, 5000);
  const std::string train_path = written(comm, train, "sources_trainer");
  const std::string val_path = written(comm, val, "sources_trainer_val");
  const std::uint64_t epochs = 2, batch = 4;
  const EpochOrder sampler(train.rows, batch, comm.size(), 2, 0, true);
  for (const std::string& mode : kModes) {
    const deck::Deck deck = make_deck("model field_probe\n" + kGraphFields + "data_file " + train_path +
                                      "\nvalidation_file " + val_path +
                                      "\nbatch_size 4\naccumulation_steps 2\nepochs 2\n" + mode);
    NetworkTrainer trainer(deck, comm);
    trainer.run();
    const auto& probe = dynamic_cast<const ProbeModel&>(trainer.model());
    std::uint64_t trained_rows = 0, evaluated_rows = 0;
    for (const Seen& s : probe.trained) {
      trained_rows += static_cast<std::uint64_t>(s.n);
      EXPECT_LT(s.epoch, epochs);
      expect_same(s, expected(train, s.ids, s.ids), "training, " + mode);  // the ids are rows of the file
    }
    for (const Seen& s : probe.evaluated) {
      evaluated_rows += static_cast<std::uint64_t>(s.n);
      EXPECT_EQ(s.epoch, Evaluator::kValidationEpoch);
      expect_same(s, expected(val, s.ids, s.ids), "validation, " + mode);
    }
    EXPECT_EQ(trained_rows, epochs * sampler.rows_per_epoch(comm.rank())) << mode;
    EXPECT_EQ(comm.sum(static_cast<long long>(evaluated_rows)) % static_cast<long long>(val.rows), 0) << mode;
    EXPECT_GT(evaluated_rows, 0u) << mode;
    if (HasFailure()) return;
  }
}

TEST(DataSources, OffsetTablesThatDoNotAddUpNameFileDatasetAndIndex) {
  const Comm comm;
  // 20 rows of r % 5 tokens: offsets 0, 0, 1, 3, 6, 10, 10, 11, ..., 40.
  struct Case {
    const char* name;
    std::size_t index;
    long long value;
    const char* message;
  };
  const std::vector<Case> cases = {{"start", 0, 1, "index 0 is 1, not 0"},
                                   {"descending", 7, 9,
                                    "index 7 is smaller than the one before (offsets must ascend)"},
                                   {"end", 20, 39, "index 20, the last, is 39 but 'tokens' has 40 elements"}};
  for (const Case& c : cases) {
    Table t = fields_table(20);
    ASSERT_EQ(t["tokens"].offsets[c.index], c.index == 0 ? 0 : c.index == 7 ? 11 : 40);
    t["tokens"].offsets[c.index] = c.value;
    const std::string path = written(comm, t, std::string("sources_offsets_") + c.name);
    const std::string want = path + ": dataset 'tokens_offsets': " + c.message;
    EXPECT_EQ(error_message([&] { open_as(kFields, path); }), want);
    EXPECT_EQ(train_error("model field_probe\n" + kFields + "data_file " + path + "\n"), want);
  }
}

TEST(DataSources, BadValuesAreReportedTheSameInEveryMode) {
  const Comm comm;
  probe_checks() = {};
  probe_checks().ranges["label"] = {-300, 1000};
  probe_checks().index_into["edges"] = "nodes";
  // 60 rows, validation_fraction 0.2: rows 48..59 are the validation part.
  struct Case {
    const char* name;
    void (*spoil)(Table& t);
    const char* message;
  };
  const std::vector<Case> cases = {
      {"nan",
       [](Table& t) {
         t["grid"].values[13 * 6 + 4] = std::numeric_limits<double>::quiet_NaN();
         t["grid"].values[21 * 6] = std::numeric_limits<double>::infinity();
       },
       "dataset 'grid': row 13 holds a NaN or Inf (first bad row of the training split: the first 48 rows of "
       "data_file)"},
      {"range",
       [](Table& t) {
         t["label"].values[17] = 5000;
         t["label"].values[40] = -301;
       },
       "dataset 'label': row 17 holds a value outside [-300, 1000] (first bad row of the training split: the first "
       "48 rows of data_file)"},
      // Row 9 has one node and one edge (0, 0): node 1 is outside the row's graph.
      {"index", [](Table& t) { t["edges"].values[static_cast<std::size_t>(t["edges"].offsets[9]) * 2 + 1] = 1; },
       "dataset 'edges': row 9 holds an index outside the row's 'nodes' elements (first bad row of the training "
       "split: the first 48 rows of data_file)"},
      // The first bad row wins, whatever its field and kind.
      {"first",
       [](Table& t) {
         t["grid"].values[30 * 6] = std::numeric_limits<double>::quiet_NaN();
         t["label"].values[25] = 1001;
         t["edges"].values[static_cast<std::size_t>(t["edges"].offsets[27]) * 2] = -1;  // row 27: 3 edges
       },
       "dataset 'label': row 25 holds a value outside [-300, 1000] (first bad row of the training split: the first "
       "48 rows of data_file)"},
      // In the validation part: the evaluator reports it, before any training.
      {"validation",
       [](Table& t) {
         const auto first = static_cast<std::size_t>(t["nodes"].offsets[55]) * 3;
         t["nodes"].values[first] = std::numeric_limits<double>::infinity();
       },
       "dataset 'nodes': row 55 holds a NaN or Inf (first bad row of the validation split: the last 12 rows "
       "of data_file, validation_fraction 0.2)"}};
  for (const Case& c : cases) {
    Table t = fields_table(60, true);
    c.spoil(t);
    const std::string path = written(comm, t, std::string("sources_bad_") + c.name);
    for (const std::string& mode : kModes)
      EXPECT_EQ(train_error("model field_probe\n" + kGraphFields + "data_file " + path +
                            "\nvalidation_fraction 0.2\nbatch_size 4\nepochs 3\n" + mode),
                path + ": " + c.message)
          << c.name << ", " << mode;
  }
  probe_checks() = {};
}

// A data set with a ragged field: the statistics read every field's rows in chunks, so the ragged
// field's elements need room too.
TEST(DataSources, StatisticsOfAFloatFieldBesideARaggedField) {
  const Comm comm;
  const Table t = fields_table(300);
  const std::string path = written(comm, t, "sources_stats_fields");
  const DataStats s = compute_data_stats(*open_as(kFields, path), comm,
                                         {{"grid", StatsGranularity::channel}, {"grid", StatsGranularity::column}});
  ASSERT_EQ(s.fields.size(), 2u);
  ASSERT_EQ(s.fields[0].mean.size(), 2u);
  ASSERT_EQ(s.fields[1].mean.size(), 6u);
  // grid(r, j) = r + j / 8: per column j the mean is 149.5 + j / 8, the std that of 0..299.
  const double spread = std::sqrt((300.0 * 300.0 - 1) / 12);
  for (int j = 0; j < 6; ++j) {
    EXPECT_DOUBLE_EQ(s.fields[1].mean[static_cast<std::size_t>(j)], 149.5 + j / 8.0);
    EXPECT_NEAR(s.fields[1].std[static_cast<std::size_t>(j)], spread, 1e-9);
  }
  for (int c = 0; c < 2; ++c) {
    const double mean = 149.5 + (3 * c + 1) / 8.0;  // columns 3c .. 3c + 2
    EXPECT_DOUBLE_EQ(s.fields[0].mean[static_cast<std::size_t>(c)], mean);
    EXPECT_NEAR(s.fields[0].std[static_cast<std::size_t>(c)], std::sqrt(spread * spread + 2.0 / 3 / 64), 1e-9);
  }
}
