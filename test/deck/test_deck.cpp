// The input deck: every error class names file:line:key exactly; values are typed and ranged.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "deck/deck.hpp"

using hpct::Error;
using hpct::ExitCode;
using hpct::deck::Deck;
using hpct::deck::Schema;

namespace {

Schema test_schema() {
  Schema s;
  s.add_int("batch_size", 16, 1, 1 << 20, "samples per rank per micro-batch");
  s.add_real("lr", 1e-3, 0.0, 10.0, "learning rate");
  s.add_bool("shuffle", true, "shuffle every epoch");
  s.add_choice("activation", "relu", {"relu", "gelu", "silu", "tanh"}, "hidden activation");
  s.add_int_list("hidden_sizes", "64,64", 1, 65536, "widths of the hidden layers");
  s.add_required_string("data_file", "HDF5 file with the training data");
  return s;
}

// Parses and returns the error message, failing the test if parsing succeeds.
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    Deck::parse(text, "run.in", test_schema(), overrides);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    return e.what();
  }
  ADD_FAILURE() << "deck parsed without error:\n" << text;
  return {};
}

}  // namespace

TEST(Deck, ParsesTypedValuesCommentsAndDefaults) {
  const Deck d = Deck::parse(
      "# a comment\n"
      "data_file  train.h5   # trailing comment\n"
      "\n"
      "batch_size 32\n"
      "lr = 0.01\n"
      "activation gelu\n"
      "hidden_sizes 128, 64 32\n"
      "shuffle off\n",
      "run.in", test_schema());
  EXPECT_EQ(d.get_string("data_file"), "train.h5");
  EXPECT_EQ(d.get_int("batch_size"), 32);
  EXPECT_DOUBLE_EQ(d.get_real("lr"), 0.01);
  EXPECT_EQ(d.get_string("activation"), "gelu");
  EXPECT_EQ(d.get_int_list("hidden_sizes"), (std::vector<long long>{128, 64, 32}));
  EXPECT_FALSE(d.get_bool("shuffle"));
  EXPECT_TRUE(d.is_set("batch_size"));
  EXPECT_EQ(d.entry("batch_size").line, 4);
}

// Note [boolean choices]: a choice with true and false among its values takes a bool key's
// spellings and holds them as true or false; a choice without them takes none of those spellings.
TEST(Deck, ABoolThatGrewAThirdValueReadsOldDecks) {
  Schema s = test_schema();
  s.add_choice("check", "true", {"true", "deep", "false"}, "a bool that grew a third value");
  const auto check = [&](const std::string& value) {
    return Deck::parse("data_file x.h5\ncheck " + value + "\n", "run.in", s).get_string("check");
  };
  for (const char* yes : {"true", "yes", "on", "1"}) EXPECT_EQ(check(yes), "true") << yes;
  for (const char* no : {"false", "no", "off", "0"}) EXPECT_EQ(check(no), "false") << no;
  EXPECT_EQ(check("deep"), "deep");
  EXPECT_EQ(Deck::parse("data_file x.h5\n", "run.in", s, {"check=off"}).settings().find("check=false") !=
                std::string::npos,
            true);
  try {
    Deck::parse("data_file x.h5\ncheck maybe\n", "run.in", s);
    ADD_FAILURE() << "check maybe parsed";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "run.in:2: check: 'maybe' is not one of: true, deep, false");
  }
  EXPECT_EQ(error_of("data_file x.h5\nactivation yes\n"),
            "run.in:2: activation: 'yes' is not one of: relu, gelu, silu, tanh");
}

TEST(Deck, DefaultsApplyWhenKeysAreAbsent) {
  const Deck d = Deck::parse("data_file x.h5\n", "run.in", test_schema());
  EXPECT_EQ(d.get_int("batch_size"), 16);
  EXPECT_FALSE(d.is_set("batch_size"));
  EXPECT_EQ(d.get_int_list("hidden_sizes"), (std::vector<long long>{64, 64}));
}

TEST(Deck, UnknownKeySuggestsTheClosestKey) {
  EXPECT_EQ(error_of("data_file x.h5\nbatch_szie 8\n"),
            "run.in:2: batch_szie: unknown key (did you mean batch_size?)");
  EXPECT_EQ(error_of("data_file x.h5\nbatch 8\n"), "run.in:2: batch: unknown key (did you mean batch_size?)");
  EXPECT_EQ(error_of("data_file x.h5\nzzzzzzzz 8\n"), "run.in:2: zzzzzzzz: unknown key");
}

TEST(Deck, MissingRequiredKey) {
  EXPECT_EQ(error_of("batch_size 8\n"), "run.in: data_file: required key is missing");
}

TEST(Deck, WrongTypes) {
  EXPECT_EQ(error_of("data_file x\nbatch_size eight\n"), "run.in:2: batch_size: expected an integer, got 'eight'");
  EXPECT_EQ(error_of("data_file x\nbatch_size 8.5\n"), "run.in:2: batch_size: expected an integer, got '8.5'");
  EXPECT_EQ(error_of("data_file x\nlr fast\n"), "run.in:2: lr: expected a real number, got 'fast'");
  EXPECT_EQ(error_of("data_file x\nshuffle maybe\n"), "run.in:2: shuffle: expected true or false, got 'maybe'");
  EXPECT_EQ(error_of("data_file x\nactivation swish\n"),
            "run.in:2: activation: 'swish' is not one of: relu, gelu, silu, tanh");
  EXPECT_EQ(error_of("data_file x\nhidden_sizes 64,x\n"),
            "run.in:2: hidden_sizes: expected a list of integers, got 'x'");
  EXPECT_EQ(error_of("data_file x\nlr nan\n"), "run.in:2: lr: expected a real number, got 'nan'");
}

TEST(Deck, OutOfRange) {
  EXPECT_EQ(error_of("data_file x\nbatch_size 0\n"), "run.in:2: batch_size: value 0 is out of range [1, 1048576]");
  EXPECT_EQ(error_of("data_file x\n\nlr -1\n"), "run.in:3: lr: value -1 is out of range [0, 10]");
  EXPECT_EQ(error_of("data_file x\nhidden_sizes 64,0\n"),
            "run.in:2: hidden_sizes: value 0 is out of range [1, 65536]");
}

TEST(Deck, DuplicateKeyNamesBothLines) {
  EXPECT_EQ(error_of("data_file x\nbatch_size 8\n# c\nbatch_size 16\n"),
            "run.in:4: batch_size: duplicate key (first set at run.in:2)");
}

TEST(Deck, MissingValue) {
  EXPECT_EQ(error_of("data_file x\nbatch_size\n"), "run.in:2: batch_size: missing value");
}

TEST(Deck, OverridesReplaceValuesAndAreChecked) {
  const Deck d = Deck::parse("data_file x\nbatch_size 8\n", "run.in", test_schema(), {"batch_size=64", "lr=0.5"});
  EXPECT_EQ(d.get_int("batch_size"), 64);
  EXPECT_EQ(d.entry("batch_size").file, "--set");
  EXPECT_DOUBLE_EQ(d.get_real("lr"), 0.5);
  EXPECT_EQ(error_of("data_file x\n", {"lr=0.1", "batch_size=0"}),
            "--set:2: batch_size: value 0 is out of range [1, 1048576]");
  EXPECT_EQ(error_of("data_file x\n", {"batchsize=4"}),
            "--set:1: batchsize: unknown key (did you mean batch_size?)");
  EXPECT_EQ(error_of("data_file x\n", {"batch_size"}), "--set:1: batch_size: expected key=value");
}

TEST(Deck, FailNamesTheKeysPlace) {
  const Deck d = Deck::parse("data_file x\n\nbatch_size 8\n", "run.in", test_schema());
  try {
    d.fail("batch_size", "must divide the data set");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "run.in:3: batch_size: must divide the data set");
  }
}

TEST(Deck, ResolvedListsEveryKeyWithItsOrigin) {
  const Deck d = Deck::parse("data_file x\nlr 0.5\n", "run.in", test_schema());
  const std::string r = d.resolved();
  EXPECT_NE(r.find("lr 0.5   # run.in:2"), std::string::npos) << r;
  EXPECT_NE(r.find("batch_size 16   # default"), std::string::npos) << r;
}

TEST(Deck, HelpListsEveryKey) {
  const Schema schema = test_schema();
  const std::string h = schema.help();
  for (const auto& k : schema.keys()) EXPECT_NE(h.find(k.name), std::string::npos) << k.name;
}

// A NUL byte used to end the value for the number parser (`epochs 2\0 9999` read as 2) and cut
// printed messages short; bytes that are not UTF-8 are just as surely not what the user meant.
TEST(Deck, RejectsNulBytesShowingThemEscaped) {
  const std::string nul_value = std::string("data_file x\nbatch_size 2") + '\0' + "9999\n";
  EXPECT_EQ(error_of(nul_value),
            "run.in:2: batch_size: byte \\x00 (NUL) is not allowed in a deck: 'batch_size 2\\x009999'");
  const std::string nul_key = std::string("data_file x\n\nbatch") + '\0' + "_size 2\n";
  EXPECT_EQ(error_of(nul_key),
            "run.in:3: batch\\x00_size: byte \\x00 (NUL) is not allowed in a deck: 'batch\\x00_size 2'");
  EXPECT_EQ(error_of("data_file x\n", {std::string("lr=0.1") + '\0' + "5"}),
            "--set:1: lr: byte \\x00 (NUL) is not allowed in a deck: 'lr=0.1\\x005'");
}

TEST(Deck, RejectsBytesThatAreNotUtf8) {
  EXPECT_EQ(error_of("data_file caf\xe9.h5\n"),
            "run.in:1: data_file: byte \\xe9 is not valid UTF-8: 'data_file caf\\xe9.h5'");
  EXPECT_EQ(error_of("data_file x\nbatch_size 8 # \xff\xfe comment\n"),
            "run.in:2: batch_size: byte \\xff is not valid UTF-8: 'batch_size 8 # \\xff\\xfe comment'");
  // Overlong encodings and UTF-16 surrogates are invalid too; real UTF-8 is fine.
  EXPECT_EQ(error_of("data_file \xc0\xaf\n"),
            "run.in:1: data_file: byte \\xc0 is not valid UTF-8: 'data_file \\xc0\\xaf'");
  EXPECT_EQ(error_of("data_file \xed\xa0\x80\n"),
            "run.in:1: data_file: byte \\xed is not valid UTF-8: 'data_file \\xed\\xa0\\x80'");
  EXPECT_EQ(error_of("data_file x\n", {"data_file=\x80"}),
            "--set:1: data_file: byte \\x80 is not valid UTF-8: 'data_file=\\x80'");
  const Deck d = Deck::parse("data_file caf\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80.h5  # \xc3\xa9t\xc3\xa9\n",
                             "run.in", test_schema());
  EXPECT_EQ(d.get_string("data_file"), "caf\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80.h5");
}

// A 200,000-character key or value used to be echoed whole in the error (and the did-you-mean
// search over such a key took seconds): errors quote a short prefix and say how long it was.
TEST(Deck, LongKeysAndValuesAreQuotedShort) {
  const std::string long_key(200000, 'k');
  const std::string unknown = error_of("data_file x\n" + long_key + " 1\n");
  EXPECT_LT(unknown.size(), 200u) << unknown.substr(0, 300);
  EXPECT_EQ(unknown.rfind("run.in:2: kkkk", 0), 0u) << unknown.substr(0, 300);
  EXPECT_NE(unknown.find("... (200000 bytes): unknown key"), std::string::npos) << unknown.substr(0, 300);

  const std::string long_number(200000, '7');
  for (const std::string& text :
       {"data_file x\nbatch_size " + long_number + "\n", "data_file x\nactivation " + long_key + "\n",
        "data_file x\nhidden_sizes 1," + long_number + "\n", "data_file x\nbatch_size " + long_key + "\n"}) {
    const std::string e = error_of(text);
    EXPECT_LT(e.size(), 200u) << e.substr(0, 300);
    EXPECT_NE(e.find("(200000 bytes)"), std::string::npos) << e.substr(0, 300);
  }
  const std::string set_error = error_of("data_file x\n", {long_key});
  EXPECT_LT(set_error.size(), 200u) << set_error.substr(0, 300);
  EXPECT_LT(error_of("data_file x\n", {"lr=" + long_key}).size(), 200u);
}
