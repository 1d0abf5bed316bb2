// Unit tests of the GBDT text inputs (the csv, tsv and libsvm sources): errors naming file:line,
// sparse rows and their width, infinities, byte-order marks and huge feature ids; header names into
// the model, its importance and exports; a weight column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "data/source_registry.hpp"
#include "gbdt/data.hpp"
#include "gbdt/export.hpp"
#include "gbdt/importance.hpp"
#include "gbdt/model_io.hpp"
#include "gbdt/objective.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

#define EXPECT_CONTAINS(text, part)                                                           \
  do {                                                                                        \
    const std::string t_ = (text);                                                            \
    EXPECT_NE(t_.find(part), std::string::npos) << "'" << t_ << "' lacks '" << (part) << "'"; \
  } while (0)

TEST(GbdtInput, ErrorsNameFileAndLine) {
  EXPECT_CONTAINS(gbdt_test::load_error("g_ragged.csv", "1,2,3\n0,4,5\n1,6\n0,7,8\n", "objective binary\n"),
                  "g_ragged.csv:3: ragged row");
  EXPECT_CONTAINS(gbdt_test::load_error("g_text.tsv", "1\t2\nx7\t4\n1\t3\n0\t1\n", "objective binary\n"),
                  "g_text.tsv:2: field 1 'x7' is not a number");
  EXPECT_CONTAINS(gbdt_test::load_error("g_label.csv", "1,2\n0,4\n# comment\n2,6\n0,7\n", "objective binary\n"),
                  "g_label.csv:4: objective: label 2 is outside");
  EXPECT_CONTAINS(gbdt_test::load_error("g_class.csv", "1,2\n0,4\n3,6\n4,7\n",
                                        "objective multiclass\nnum_class 3\n"),
                  "g_class.csv:3: num_class: label 3 needs at least 4 classes");
  EXPECT_CONTAINS(gbdt_test::load_error("g_ids.svm", "1 1:1 2:1\n0 0:1\n1 3:1\n0 2:4\n", "objective binary\n"),
                  "g_ids.svm:2: feature id 0 below the base 1");
  EXPECT_CONTAINS(gbdt_test::load_error("g_ids0.svm", "1 0:1 2:1\n0 1:abc\n1 3:1\n0 2:4\n",
                                        "objective binary\nlibsvm_base 0\n"),
                  "g_ids0.svm:2: value 'abc' of feature 1 is not a number");
  EXPECT_EQ(gbdt_test::load_error("g_ok.svm", "1 0:1 2:1\n0 1:2\n1 3:1\n0 2:4\n",
                                  "objective binary\nlibsvm_base 0\n"),
            "");
  EXPECT_CONTAINS(gbdt_test::load_error("g_fmt.dat", "1,2\n", "objective binary\n"), "data_format");
  // Header names a key cannot pick one column by (pandas writes duplicates; a ';' file is one field).
  const std::string header = "objective binary\ntext_header true\nlabel_column y\n";
  EXPECT_CONTAINS(gbdt_test::load_error("g_dup.csv", "a,y,a\n1,0,2\n3,1,4\n",
                                        "objective binary\ntext_header "
                                        "true\nlabel_column a\n"),
                  "g_dup.csv:1: label_column: 'a' names two columns of the header (fields 1 and 3)");
  EXPECT_CONTAINS(gbdt_test::load_error("g_dupcat.csv", "a,y,a\nu,0,2\nv,1,4\n",
                                        header + "categorical_columns a\n"),
                  "categorical_columns: 'a' names two feature columns of the header");
  EXPECT_EQ(gbdt_test::load_error("g_dupok.csv", "a,y,a\n1,0,2\n3,1,4\n", header), "");
  EXPECT_CONTAINS(gbdt_test::load_error("g_semi.csv", "a;y\n1;0\n3;1\n", header),
                  "g_semi.csv:1: label_column: no column named 'y' in the header (1 field: 'a;y'); data_format csv "
                  "splits at ','");
}

// Note [category codes]: text columns and categorical_columns become codes numbered by global
// count (ties by bytes), the same on 1 and 2 ranks; validation data takes the training codes
// (unseen: missing) and text in a numeric column is an error naming file, line and column.
TEST(GbdtInput, TextColumnsAreCategoriesAgreedOverRanks) {
  const Comm comm;
  const std::string file = gbdt_test::write_file(
      "g_cat.csv", "y,color,n,size\n1,red,1,3\n0,blue,2,3.0\n1,red,,1\n0,green,4,\"2\"\n1,red,5,NA\n0,blue,6,1\n");
  const auto deck = gbdt_test::deck("data_file " + file +
                                    "\ntext_header true\nlabel_column y\ncategorical_columns size\n");
  const Data d = load_data(deck, "data_file", "train", comm);
  ASSERT_EQ(d.cols, 3);
  EXPECT_TRUE(d.categories.of(0));
  EXPECT_FALSE(d.categories.of(1));
  EXPECT_TRUE(d.categories.of(2));
  EXPECT_EQ(d.categories.names[0], (std::vector<std::string>{"red", "blue", "green"}));
  EXPECT_EQ(d.categories.names[2], (std::vector<std::string>{"1", "3", "2"}));  // 2, 2 and 1 rows
  const float nan = std::nanf("");
  const float want[6][3] = {{0, 1, 1}, {1, 2, 1}, {0, nan, 0}, {2, 4, 2}, {0, 5, nan}, {1, 6, 0}};
  for (long long r = 0; r < d.rows; ++r)
    for (int f = 0; f < 3; ++f) {
      const float got = d.x[static_cast<std::size_t>(r * 3 + f)], w = want[d.first_row + r][f];
      EXPECT_TRUE(got == w || (std::isnan(got) && std::isnan(w))) << "row " << d.first_row + r << " feature " << f;
    }
  const std::string valid = gbdt_test::write_file("g_cat_valid.csv", "y,color,n,size\n1,purple,1,3\n0,red,2,9\n");
  const Data v = load_data(gbdt_test::deck("data_file " + file + "\nvalidation_file " + valid +
                                           "\ntext_header true\nlabel_column y\n"),
                           "validation_file", "valid", comm, 3, &d.categories);
  for (long long r = 0; r < v.rows; ++r) {
    const float* x = &v.x[static_cast<std::size_t>(r * 3)];
    EXPECT_TRUE(v.first_row + r == 0 ? std::isnan(x[0]) && x[2] == 1 : x[0] == 0 && std::isnan(x[2]));
  }
  const std::string bad = gbdt_test::write_file("g_cat_bad.csv", "y,color,n,size\n1,red,1,3\n0,red,x,2\n");
  try {
    load_data(gbdt_test::deck("data_file " + file + "\nvalidation_file " + bad +
                              "\ntext_header true\nlabel_column y\n"),
              "validation_file", "valid", comm, 3, &d.categories);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(),
                    "g_cat_bad.csv:3: column 'n' holds 'x', not a number, but data_file reads it as numbers");
  }
}

// weight_column: the weights reach Data::w on every rank count, the column is no feature, and a
// categorical_columns index past it counts it as a file column (as the label's); weight_file too is
// refused, and so is an index naming the weight column.
TEST(GbdtInput, WeightColumnGivesRowWeights) {
  const Comm comm;
  const std::string file = gbdt_test::write_file("g_wcol.csv",
                                                 "y,w,a,code\n1,0.5,1,3\n0,2,2,4\n1,0,3,3\n0,1.25,4,5\n");
  const std::string keys = "data_file " + file + "\ntext_header true\nlabel_column y\nweight_column w\n";
  const Data d = load_data(gbdt_test::deck(keys + "categorical_columns 3\n"), "data_file", "train", comm);
  ASSERT_EQ(d.cols, 2);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"a", "code"}));
  EXPECT_FALSE(d.categories.of(0));
  EXPECT_TRUE(d.categories.of(1));
  const float want[4] = {0.5f, 2, 0, 1.25f};
  ASSERT_EQ(d.w.size(), static_cast<std::size_t>(d.rows));
  for (long long r = 0; r < d.rows; ++r) EXPECT_EQ(d.w[static_cast<std::size_t>(r)], want[d.first_row + r]);
  try {
    load_data(gbdt_test::deck(keys + "categorical_columns 1\n"), "data_file", "train", comm);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "categorical_columns: column 1 is the row weight column");
  }
  const std::string wf = gbdt_test::write_file("g_wcol.weight", "1\n1\n1\n1\n");
  try {
    load_data(gbdt_test::deck(keys + "weight_file " + wf + "\n"), "data_file", "train", comm);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_CONTAINS(e.what(), "weight_file: weight_column gives data_file's weights already");
  }
}

// LibSVM: absent entries are missing (NaN), ids 0- or 1-based; the width is the global maximum.
TEST(GbdtInput, LibsvmSparseRowsAndWidthOverRanks) {
  const Comm comm;
  const std::string file = gbdt_test::write_file("g_sparse.svm", "1 1:0.5 3:2\n0 2:-1\n1\n0 7:3 # note\n");
  const Data d = load_data(gbdt_test::deck("data_file " + file + "\n"), "data_file", "train", comm);
  EXPECT_EQ(d.cols, 7);
  EXPECT_EQ(d.global_rows, 4);
  EXPECT_EQ(comm.sum(d.rows), 4);
  for (long long r = 0; r < d.rows; ++r) {
    const long long g = d.first_row + r;
    const float* x = &d.x[static_cast<std::size_t>(r * d.cols)];
    if (g == 0) {
      EXPECT_EQ(x[0], 0.5f);
      EXPECT_TRUE(std::isnan(x[1]));
      EXPECT_EQ(x[2], 2.0f);
    }
    if (g == 3) {
      EXPECT_EQ(x[6], 3.0f);
    }
    if (g == 2) {
      EXPECT_TRUE(std::all_of(x, x + 7, [](float v) { return std::isnan(v); }));
    }
  }
}

// Tables as users hand them over: an infinity (written out or past float's range) is an error naming
// the file, line and field; a UTF-8 byte-order mark is skipped; a LibSVM id past the stated limit is
// an error naming it, not a failed allocation.
TEST(GbdtInput, InfinitiesByteOrderMarksAndHugeFeatureIds) {
  EXPECT_CONTAINS(gbdt_test::load_error("g_inf.csv", "1,2\n0,1e999\n1,3\n0,1\n", "objective binary\n"),
                  "g_inf.csv:2: field 2 '1e999' is infinite (or beyond float's range)");
  EXPECT_CONTAINS(gbdt_test::load_error("g_inf.tsv", "1\t2\n0\t-inf\n1\t3\n0\t1\n", "objective binary\n"),
                  "g_inf.tsv:2: field 2 '-inf' is infinite");
  EXPECT_CONTAINS(gbdt_test::load_error("g_inf.svm", "1 1:1\n0 2:1e999\n1 1:3\n0 2:1\n", "objective binary\n"),
                  "g_inf.svm:2: value '1e999' of feature 2 is infinite");
  EXPECT_EQ(gbdt_test::load_error("g_bom.csv",
                                  "\xEF\xBB\xBF"
                                  "0,1\n1,2\n0,1\n1,3\n",
                                  "objective binary\n"),
            "");
  EXPECT_CONTAINS(gbdt_test::load_error("g_huge.svm", "1 1:1\n0 2000000000:1\n1 1:3\n0 2:1\n",
                                        "objective binary\n"),
                  "g_huge.svm:2: feature id 2000000000 is beyond the limit of 16777216 features");
}

// The csv source as networks and trees read it (data/text_table.hpp): the header's names, the label
// by name, rows read by index equal to those read as a block, file lines for messages.
TEST(GbdtInput, CsvSourceNamesRowsAndLines) {
  const std::string file = gbdt_test::write_file("g_named.csv",
                                                 "a,b,y,c\n# note\n1,2,0,3\n4,5,1,6\n\n7,8,0,9\n10,11,1,12\n");
  const auto d = gbdt_test::deck("data_file " + file + "\ntext_header true\nlabel_column y\n");
  const auto ds = open_data_source(d, file, "data_file");
  EXPECT_EQ(ds->value_names(0), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(ds->value_names(1), std::vector<std::string>{"y"});
  ASSERT_EQ(ds->rows(), 4u);
  EXPECT_EQ(ds->file_line(2), 6);
  std::vector<float> x(6), y(2);
  ds->read_rows({1, 3}, {{x.data(), nullptr}, {y.data(), nullptr}});
  EXPECT_EQ(x, (std::vector<float>{4, 5, 6, 10, 11, 12}));
  EXPECT_EQ(y, (std::vector<float>{1, 1}));
  std::vector<float> xb(12), yb(4);
  ds->read_block(0, 4, {{xb.data(), nullptr}, {yb.data(), nullptr}});
  EXPECT_EQ(xb, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(yb, (std::vector<float>{0, 1, 0, 1}));
  const Comm comm;
  const Data data = load_data(d, "data_file", "train", comm);
  EXPECT_EQ(data.feature_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(comm.sum(data.rows), 4);
  for (long long r = 0; r < data.rows; ++r)
    EXPECT_EQ(data.line[static_cast<std::size_t>(r)], (std::vector<int>{3, 4, 6, 7})[data.first_row + r]);
}

TEST(GbdtInput, HeaderErrorsNameTheColumn) {
  EXPECT_CONTAINS(gbdt_test::load_error("g_noname.csv", "a,y\n1,0\n2,1\n",
                                        "objective binary\ntext_header true\nlabel_column z\n"),
                  "g_noname.csv:1: label_column: no column named 'z' in the header");
  EXPECT_CONTAINS(gbdt_test::load_error("g_nohdr.csv", "1,0\n2,1\n", "objective binary\nlabel_column y\n"),
                  "names a column, but the file has no header");
  EXPECT_CONTAINS(gbdt_test::load_error("g_hdr3.csv", "a,b,y\n1,0\n2,1\n", "objective binary\ntext_header true\n"),
                  "g_hdr3.csv:2: the header names 3 columns, the first data row has 2 fields");
  EXPECT_EQ(gbdt_test::load_error("g_label2.csv", "a,b,y\n1,5,0\n2,6,1\n",
                                  "objective binary\ntext_header true\nlabel_column 2\n"),
            "");
}

// The header's names go into the model file, its importance and both exports; unnamed models keep
// the file without the field.
TEST(GbdtInput, NamesReachTheModelImportanceAndExports) {
  std::string text = "width,label,height\n";
  for (int i = 0; i < 200; ++i)
    text += std::to_string(i % 17) + "," + std::to_string(i % 17 > 8) + "," + std::to_string(i % 5) + "\n";
  const std::string file = gbdt_test::write_file("g_names.csv", text);
  const auto d = gbdt_test::deck(
      "data_file " + file + "\ntext_header true\nlabel_column label\nobjective binary\nnum_trees 3\nmax_depth 2\n");
  const Comm comm;
  const Data data = load_data(d, "data_file", "train", comm);
  const TrainResult r = train(params_from_deck(d), data, {}, comm);
  EXPECT_EQ(r.model.feature_names, (std::vector<std::string>{"width", "height"}));
  const std::string json = to_json(r.model);
  EXPECT_CONTAINS(json, "\"feature_names\": [\"width\",\"height\"]");
  EXPECT_EQ(from_json(json, "m.json").feature_names, r.model.feature_names);
  const auto imp = feature_importance(r.model);
  ASSERT_EQ(imp.size(), 2u);
  EXPECT_EQ(imp[0].name, "width");
  EXPECT_GT(imp[0].splits, 0);
  EXPECT_GT(imp[0].gain, imp[1].gain);
  EXPECT_CONTAINS(importance_table(r.model), "feature\tsplits\tgain\tcover\nwidth\t");
  EXPECT_CONTAINS(to_xgboost_json(r.model), "\"feature_names\":[\"width\",\"height\"]");
  EXPECT_CONTAINS(to_lightgbm_text(r.model), "\nfeature_names=width height\n");
  Model unnamed = r.model;
  unnamed.feature_names.clear();
  EXPECT_EQ(to_json(unnamed).find("feature_names"), std::string::npos);
  EXPECT_CONTAINS(to_lightgbm_text(unnamed), "\nfeature_names=Column_0 Column_1\n");
}
