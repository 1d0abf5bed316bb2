// clip_for_log: what a log or error line may quote of a user's text (bounded, printable, escaped).
#include <gtest/gtest.h>

#include "core/log.hpp"

using hpct::clip_for_log;
using hpct::utf8_length_at;

TEST(ClipForLog, ShortPrintableTextIsUnchanged) {
  EXPECT_EQ(clip_for_log("64,64", 60), "64,64");
  EXPECT_EQ(clip_for_log("", 60), "");
  EXPECT_EQ(clip_for_log("caf\xc3\xa9 \xe2\x82\xac", 60), "caf\xc3\xa9 \xe2\x82\xac");
}

TEST(ClipForLog, LongTextKeepsAPrefixAndSaysHowLongItWas) {
  const std::string s(200000, '6');
  EXPECT_EQ(clip_for_log(s, 10), "6666666666... (200000 bytes)");
  EXPECT_EQ(clip_for_log(std::string(10, 'a'), 10), "aaaaaaaaaa");
  EXPECT_EQ(clip_for_log(std::string(11, 'a'), 10), "aaaaaaaaaa... (11 bytes)");
}

TEST(ClipForLog, NeverCutsAUtf8Character) {
  // 9 ASCII bytes then a 3-byte euro sign: the cut at 10 falls inside it, so it is left out whole.
  EXPECT_EQ(clip_for_log("123456789\xe2\x82\xac"
                         "abc",
                         10),
            "123456789... (15 bytes)");
}

TEST(ClipForLog, ControlAndInvalidBytesAreEscaped) {
  EXPECT_EQ(clip_for_log(std::string("2\0"
                                     "9",
                                     3),
                         60),
            "2\\x009");
  EXPECT_EQ(clip_for_log("a\tb\x1b[31m\x7f", 60), "a\\x09b\\x1b[31m\\x7f");
  EXPECT_EQ(clip_for_log("\xff\xc3(\xed\xa0\x80", 60), "\\xff\\xc3(\\xed\\xa0\\x80");
}

TEST(Utf8LengthAt, AcceptsWellFormedSequencesOnly) {
  EXPECT_EQ(utf8_length_at("a", 0), 1u);
  EXPECT_EQ(utf8_length_at("\xc3\xa9", 0), 2u);
  EXPECT_EQ(utf8_length_at("\xe2\x82\xac", 0), 3u);
  EXPECT_EQ(utf8_length_at("\xf0\x9f\x98\x80", 0), 4u);
  EXPECT_EQ(utf8_length_at("\xc3", 0), 0u);                // truncated
  EXPECT_EQ(utf8_length_at("\xc0\xaf", 0), 0u);            // overlong '/'
  EXPECT_EQ(utf8_length_at("\xe0\x80\xaf", 0), 0u);        // overlong '/'
  EXPECT_EQ(utf8_length_at("\xed\xa0\x80", 0), 0u);        // UTF-16 surrogate
  EXPECT_EQ(utf8_length_at("\xf4\x90\x80\x80", 0), 0u);    // above U+10FFFF
  EXPECT_EQ(utf8_length_at("\x80", 0), 0u);                // lone continuation byte
  EXPECT_EQ(utf8_length_at(std::string(1, '\0'), 0), 1u);  // NUL is UTF-8; the deck rejects it itself
}
