// The streaming text readers (Note [streaming text] in io/text_lines.hpp): rank blocks over a file
// with a header, comments, blank lines, CRLF ends and a byte-order mark come out as the whole file
// read at once would give them, with the right line numbers; fields read as strtof reads them;
// LibSVM blocks; the weight reader's count check names the last line; a weight column.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "io/text_tables.hpp"
#include "test_paths.hpp"

namespace hpct::io {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::path(hpct::test::binary_dir()) / "test" /
                                    "scratch_text_tables";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(TextTables, RankBlocksCoverEveryRowOnceWithTheirLineNumbers) {
  const std::string path = write("t.csv",
                                 "\xEF\xBB\xBFy,a,b\r\n"  // BOM + header, CRLF
                                 "# a comment\n"
                                 "1,0.5,NA\r\n"
                                 "\n"
                                 "0,1.5,2\n"
                                 "   \n"
                                 "1,2.5,3\n"
                                 "0,3.5,4\n"
                                 "1,4.5,5");  // no final newline
  TextOptions opt;
  opt.header = true;
  std::vector<float> x, y;
  std::vector<int> lines;
  for (int rank = 0; rank < 3; ++rank) {
    const Table t = read_text_block(path, opt, rank, 3);
    EXPECT_EQ(t.global_rows, 5);
    EXPECT_EQ(t.cols, 2);
    EXPECT_EQ(t.first_row, 5 * rank / 3);
    x.insert(x.end(), t.x.begin(), t.x.end());
    y.insert(y.end(), t.y.begin(), t.y.end());
    lines.insert(lines.end(), t.line.begin(), t.line.end());
  }
  EXPECT_EQ(y, (std::vector<float>{1, 0, 1, 0, 1}));
  EXPECT_EQ(lines, (std::vector<int>{3, 5, 7, 8, 9}));
  ASSERT_EQ(x.size(), 10u);
  EXPECT_EQ(x[0], 0.5f);
  EXPECT_TRUE(std::isnan(x[1]));
  EXPECT_EQ(x[9], 5.0f);
}

// Fields are read with std::from_chars and, for what it does not take whole, strtof: every field
// must come out as strtof alone reads it (rounding, signs, hex, underflow, long digit strings).
TEST(TextTables, FieldsReadAsStrtofReadsThem) {
  const std::vector<std::string> fields = {"0.1",          "+1.5",    "-2.75e-3",
                                           "0x1p3",        "1e-50",   "16777217",
                                           "3.4028235e38", " 7 ",     "1.00000005960464477539",
                                           "-0",           "4.9e-46", ".5",
                                           "5.",           "1E3"};
  std::string line = "1";
  for (const std::string& f : fields) line += "," + f;
  const std::string path = write("fields.csv", line + "\n");
  const Table t = read_text_block(path, TextOptions{}, 0, 1);
  ASSERT_EQ(t.x.size(), fields.size());
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const float expected = std::strtof(fields[k].c_str(), nullptr);
    EXPECT_EQ(std::memcmp(&t.x[k], &expected, sizeof(float)), 0) << "'" << fields[k] << "' read as " << t.x[k];
  }
}

TEST(TextTables, LibsvmBlocksAndErrorsNameTheLine) {
  const std::string path = write("t.svm", "1 1:0.5 3:2\n# skip\n0 2:1\n1 1:3 2:4 3:5\n");
  TextOptions opt;
  opt.format = TextFormat::libsvm;
  const Table b = read_text_block(path, opt, 1, 2);
  EXPECT_EQ(b.first_row, 1);
  EXPECT_EQ(b.rows, 2);
  EXPECT_EQ(b.line, (std::vector<int>{3, 4}));
  EXPECT_EQ(b.cols, 3);
  EXPECT_TRUE(std::isnan(b.x[0]));
  EXPECT_EQ(b.x[1], 1.0f);
  const std::string bad = write("bad.svm", "1 1:0.5\n0 2:x\n");
  try {
    read_text_block(bad, opt, 0, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.svm:2"), std::string::npos) << e.what();
  }
}

// Note [absent LibSVM entries]: absent_zero reads an absent id as 0 (LightGBM), a written nan stays
// missing; without it an absent id is missing (XGBoost).
TEST(TextTables, LibsvmAbsentEntriesZeroOrMissing) {
  const std::string path = write("absent.svm", "1 2:0.5 3:nan\n0 1:2\n");
  TextOptions opt;
  opt.format = TextFormat::libsvm;
  opt.absent_zero = true;
  const Table z = read_text_block(path, opt, 0, 1);  // rank 0 of 1: both rows
  ASSERT_EQ(z.cols, 3);
  EXPECT_EQ(z.x[0], 0.0f);
  EXPECT_EQ(z.x[1], 0.5f);
  EXPECT_TRUE(std::isnan(z.x[2]));
  EXPECT_EQ(z.x[3], 2.0f);
  EXPECT_EQ(z.x[4], 0.0f);
  EXPECT_EQ(z.x[5], 0.0f);
  opt.absent_zero = false;
  const Table m = read_text_block(path, opt, 0, 1);
  EXPECT_TRUE(std::isnan(m.x[0]));
  EXPECT_TRUE(std::isnan(m.x[4]) && std::isnan(m.x[5]));
}

// Note [quoted fields]: pandas quotes a field holding the delimiter or a quote; text fields are
// kept for categorical columns (TextStrings) or refused with the file, line and column named.
TEST(TextTables, QuotedFieldsAndTextColumns) {
  const std::string path = write("quoted.csv",
                                 "y,job,\"x, scaled\"\n"
                                 "1,\"Craftsmen, Foremen\",0.5\n"
                                 "0, plain ,\"2\"\n"
                                 "1,\"say \"\"hi\"\"\",\"\"\n");
  TextOptions opt;
  opt.header = true;
  const TextLayout t = scan_text(path, opt);
  EXPECT_EQ(t.names, (std::vector<std::string>{"job", "x, scaled"}));
  const std::uint64_t rows[] = {0, 1, 2};
  std::vector<float> x(6), y(3);
  TextStrings s;
  read_text_rows(t, rows, 3, x.data(), y.data(), &s);
  EXPECT_EQ(y, (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(s.dict[0], (std::vector<std::string>{"Craftsmen, Foremen", "plain", "say \"hi\""}));
  EXPECT_EQ(s.cells[0].size(), 3u);
  EXPECT_TRUE(s.cells[1].empty());
  EXPECT_EQ(x[1], 0.5f);
  EXPECT_EQ(x[3], 2.0f);
  EXPECT_TRUE(std::isnan(x[5]));  // a quoted empty field is missing
  try {
    read_text_rows(t, rows, 3, x.data(), y.data());  // no TextStrings: text is an error
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("quoted.csv:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("column 'job'"), std::string::npos) << e.what();
  }
  const std::string open = write("open.csv", "1,\"never closed,2\n");
  try {
    scan_text(open, TextOptions{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("open.csv:1: field 2 opens a quote the line does not close"),
              std::string::npos)
        << e.what();
  }
  // A text cell with a line break, as pandas writes it (quoted over two lines, CRLF, a BOM): the
  // line, the field and what to do (it said "unbalanced quote").
  const std::string broken = write("line_break.csv", "\xEF\xBB\xBFx,note,y\r\n1,\"a\nb\",0\r\n2,c,1\r\n");
  try {
    TextOptions header;
    header.header = true;
    scan_text(broken, header);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line_break.csv:2: field 2 opens a quote the line does not close: a "
                                         "quoted "
                                         "field may not span lines (a text cell with a line break?"),
              std::string::npos)
        << e.what();
  }
}

TEST(TextTables, WeightsAreCountedToTheLastLine) {
  const std::string path = write("w.weight", "1\n2\n\n3\n");
  EXPECT_EQ(read_column_block(path, 1, 2, 3), (std::vector<float>{2, 3}));
  try {
    read_column_block(path, 0, 2, 4);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w.weight:4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 3 values, the data has 4 rows"), std::string::npos) << e.what();
  }
}

// weight_column: the weight is read apart and shifts the features after it (as the label and the query id
// columns do); header names skip it; a bad weight names the line, the column and weight_column.
TEST(TextTables, WeightColumnIsReadApartFromTheFeatures) {
  const std::string path = write("wcol.csv",
                                 "q,a,w,y,b\n"
                                 "1,0.5,2,1,x\n"
                                 "1,1.5,0,0,y\n");
  TextOptions opt;
  opt.header = true;
  opt.label_name = "y";
  opt.weight_name = "w";
  opt.group_column = 0;
  const TextLayout t = scan_text(path, opt);
  EXPECT_EQ(t.opt.weight_column, 2);
  EXPECT_EQ(t.cols, 2);
  EXPECT_EQ(t.names, (std::vector<std::string>{"a", "b"}));
  const std::uint64_t rows[] = {0, 1};
  std::vector<float> x(4), y(2), w(2);
  TextStrings s;
  read_text_rows(t, rows, 2, x.data(), y.data(), &s, w.data());
  EXPECT_EQ(w, (std::vector<float>{2, 0}));
  EXPECT_EQ(y, (std::vector<float>{1, 0}));
  EXPECT_EQ(x[0], 0.5f);
  EXPECT_EQ(x[2], 1.5f);
  EXPECT_EQ(s.dict[1], (std::vector<std::string>{"x", "y"}));
  for (const char* bad : {"-1", "", "NA", "heavy", "inf"}) {
    const std::string p = write("wbad.csv", std::string("q,a,w,y,b\n1,0.5,2,1,x\n1,1.5,") + bad + ",0,y\n");
    const TextLayout tb = scan_text(p, opt);
    try {
      read_text_rows(tb, rows, 2, x.data(), y.data(), &s, w.data());
      FAIL() << "no error for weight '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("wbad.csv:3: weight_column"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("field 3 (the row weight"), std::string::npos) << e.what();
    }
  }
  opt.weight_name = "weight";
  try {
    scan_text(path, opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wcol.csv:1: weight_column: no column named 'weight'"), std::string::npos)
        << e.what();
  }
  opt.weight_name.clear();
  opt.weight_column = 3;  // the label's column
  try {
    scan_text(path, opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the weight column is the label column"), std::string::npos) << e.what();
  }
}

// Note [text in UTF-8]: Latin-1 bytes (Excel's "caf\xe9") in a category, a class name or the
// header, and a UTF-16 file, are refused where they are read, naming file, line and field (they
// stopped the run at the model's JSON with exit 1); UTF-8 text is read as it is.
TEST(TextTables, TextThatIsNotUtf8IsRefusedNamingItsLineAndField) {
  TextOptions opt;
  opt.header = true;
  opt.label_column = 1;
  const auto error_of = [&](const std::string& path, bool keep_label) {
    try {
      const TextLayout t = scan_text(path, opt);
      const std::uint64_t rows[] = {0, 1};
      std::vector<float> x(2), y(2);
      TextStrings s;
      s.keep_label = keep_label;
      read_text_rows(t, rows, 2, x.data(), y.data(), &s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(write("utf8.csv", "job,y\ncaf\xc3\xa9,1\nbar,0\n"), false), "no error");
  const std::string latin1 = write("latin1.csv", "job,y\nbar,1\ncaf\xe9,0\n");
  EXPECT_NE(error_of(latin1, false).find(latin1 + ":3: field 1 (column 'job') 'caf\\xe9': byte \\xe9 is not UTF-8"),
            std::string::npos)
      << error_of(latin1, false);
  const std::string label = write("latin1_label.csv", "job,y\nbar,oui\nbar,d\xe9j\xe0\n");
  EXPECT_NE(error_of(label, true).find(label + ":3: field 2 (column 'y') 'd\\xe9j\\xe0': byte \\xe9"),
            std::string::npos)
      << error_of(label, true);
  const std::string header = write("latin1_header.csv", "m\xe9tier,y\nbar,1\nbar,0\n");
  EXPECT_NE(error_of(header, false).find(header + ":1: header field 1 'm\\xe9tier': byte \\xe9"), std::string::npos)
      << error_of(header, false);
  const std::string utf16 = write("utf16.csv", std::string("\xff\xfej\0o\0b\0,\0y\0\n\0", 14));
  EXPECT_NE(error_of(utf16, false).find(utf16 + ":1: header field 1 '\\xff\\xfej\\x00o\\x00b\\x00': byte \\xff"),
            std::string::npos)
      << error_of(utf16, false);
}

}  // namespace
}  // namespace hpct::io
