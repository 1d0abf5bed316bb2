// Unit tests of the GBDT text inputs (csv, tsv, libsvm): errors naming file:line, sparse rows and
// their width over ranks, infinities, byte-order marks and huge feature ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "gbdt/data.hpp"
#include "gbdt/objective.hpp"
#include "gbdt_test_util.hpp"

using namespace hpct;
using namespace hpct::gbdt;

#define EXPECT_CONTAINS(text, part)                                                           \
  do {                                                                                        \
    const std::string t_ = (text);                                                            \
    EXPECT_NE(t_.find(part), std::string::npos) << "'" << t_ << "' lacks '" << (part) << "'"; \
  } while (0)

namespace {
// Loads a file through the trainer's path and returns the agreed error message ("" when none).
std::string load_error(const std::string& name, const std::string& text, const std::string& deck_extra) {
  const std::string file = gbdt_test::write_file(name, text);
  const Comm comm;
  try {
    const auto d = gbdt_test::deck("data_file " + file + "\n" + deck_extra);
    const BoostParams p = params_from_deck(d);
    Data data = load_data(source_from_deck(d, "data_file"), "train", comm);
    comm.run_agreed([&] { check_labels(p.objective, p.num_class, data.y, data.line, data.file); });
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
    return e.what();
  }
  return "";
}
}  // namespace

TEST(GbdtInput, ErrorsNameFileAndLine) {
  EXPECT_CONTAINS(load_error("g_ragged.csv", "1,2,3\n0,4,5\n1,6\n0,7,8\n", "objective binary\n"),
                  "g_ragged.csv:3: ragged row");
  EXPECT_CONTAINS(load_error("g_text.tsv", "1\t2\n0\tx7\n1\t3\n0\t1\n", "objective binary\n"),
                  "g_text.tsv:2: field 2 'x7' is not a number");
  EXPECT_CONTAINS(load_error("g_label.csv", "1,2\n0,4\n# comment\n2,6\n0,7\n", "objective binary\n"),
                  "g_label.csv:4: objective: label 2 is outside");
  EXPECT_CONTAINS(load_error("g_class.csv", "1,2\n0,4\n3,6\n4,7\n", "objective multiclass\nnum_class 3\n"),
                  "g_class.csv:3: num_class: label 3 needs at least 4 classes");
  EXPECT_CONTAINS(load_error("g_ids.svm", "1 1:1 2:1\n0 0:1\n1 3:1\n0 2:4\n", "objective binary\n"),
                  "g_ids.svm:2: feature id 0 below the base 1");
  EXPECT_CONTAINS(load_error("g_ids0.svm", "1 0:1 2:1\n0 1:abc\n1 3:1\n0 2:4\n",
                             "objective binary\nlibsvm_base 0\n"),
                  "g_ids0.svm:2: value 'abc' of feature 1 is not a number");
  EXPECT_EQ(load_error("g_ok.svm", "1 0:1 2:1\n0 1:2\n1 3:1\n0 2:4\n", "objective binary\nlibsvm_base 0\n"), "");
  EXPECT_CONTAINS(load_error("g_fmt.dat", "1,2\n", "objective binary\n"), "data_format");
}

// LibSVM: absent entries are missing (NaN), ids 0- or 1-based; the width is the global maximum.
TEST(GbdtInput, LibsvmSparseRowsAndWidthOverRanks) {
  const Comm comm;
  const std::string file = gbdt_test::write_file("g_sparse.svm", "1 1:0.5 3:2\n0 2:-1\n1\n0 7:3 # note\n");
  DataSource src;
  src.file = file;
  const Data d = load_data(src, "train", comm);
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
  EXPECT_CONTAINS(load_error("g_inf.csv", "1,2\n0,1e999\n1,3\n0,1\n", "objective binary\n"),
                  "g_inf.csv:2: field 2 '1e999' is infinite (or beyond float's range)");
  EXPECT_CONTAINS(load_error("g_inf.tsv", "1\t2\n0\t-inf\n1\t3\n0\t1\n", "objective binary\n"),
                  "g_inf.tsv:2: field 2 '-inf' is infinite");
  EXPECT_CONTAINS(load_error("g_inf.svm", "1 1:1\n0 2:1e999\n1 1:3\n0 2:1\n", "objective binary\n"),
                  "g_inf.svm:2: value '1e999' of feature 2 is infinite");
  EXPECT_EQ(load_error("g_bom.csv",
                       "\xEF\xBB\xBF"
                       "0,1\n1,2\n0,1\n1,3\n",
                       "objective binary\n"),
            "");
  EXPECT_CONTAINS(load_error("g_huge.svm", "1 1:1\n0 2000000000:1\n1 1:3\n0 2:1\n", "objective binary\n"),
                  "g_huge.svm:2: feature id 2000000000 is beyond the limit of 16777216 features");
}
