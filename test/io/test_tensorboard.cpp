// CRC-32C against published vectors, the protobuf bytes of an Event, and the record framing of a
// written event file (lengths and masked CRCs re-checked byte by byte).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "io/crc32c.hpp"
#include "io/tensorboard.hpp"

namespace hpct {
namespace {

std::uint32_t crc_of(const std::string& s) { return crc32c(s.data(), s.size()); }

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc_of(""), 0u);
  EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
  // RFC 3720 (iSCSI) appendix B.4.
  EXPECT_EQ(crc_of(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc_of(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i)
    ascending.push_back(static_cast<char>(i)), descending.push_back(static_cast<char>(31 - i));
  EXPECT_EQ(crc_of(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc_of(descending), 0x113FDB5Cu);
}

TEST(Crc32c, ContinuesAcrossChunks) {
  const std::string s = "123456789";
  EXPECT_EQ(crc32c(s.data() + 4, 5, crc32c(s.data(), 4)), 0xE3069283u);
}

TEST(Crc32c, MaskRotatesAndAddsTheConstant) {
  EXPECT_EQ(mask_crc32c(0), 0xa282ead8u);
  EXPECT_EQ(mask_crc32c(0x00008000u), 0xa282ead9u);  // bit 15 rotates to bit 0
}

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(TensorBoard, EventBytesFollowTheProtobufWireFormat) {
  // wall_time 1.5 (field 1, fixed64), step 3 (field 2, varint), summary (field 5) holding one value
  // (field 1) with tag "a" (field 1) and simple_value 2.0f (field 2, fixed32).
  const std::string expected = bytes({0x09, 0,    0,    0,    0,    0,   0,    0xF8, 0x3F, 0x10, 0x03, 0x2A,
                                      0x0A, 0x0A, 0x08, 0x0A, 0x01, 'a', 0x15, 0,    0,    0,    0x40});
  EXPECT_EQ(encode_event(1.5, 3, "", {{"a", 2.0}}), expected);
  const std::string version = encode_event(0.0, 0, "brain.Event:2", {});
  EXPECT_EQ(version.substr(9), bytes({0x10, 0x00, 0x1A, 13}) + "brain.Event:2");
  // int64 step 300 is a two-byte varint; -1 is ten bytes of two's complement.
  EXPECT_EQ(encode_event(0.0, 300, "", {}).substr(9), bytes({0x10, 0xAC, 0x02}));
  EXPECT_EQ(encode_event(0.0, -1, "", {}).substr(9),
            bytes({0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

std::uint64_t read_le(const std::string& s, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

TEST(TensorBoard, RecordsAreFramedWithMaskedCrcs) {
  const std::string dir = "scratch_tensorboard_unit";
  std::filesystem::remove_all(dir);
  std::string path;
  {
    TensorBoardWriter w(dir);
    path = w.path();
    w.write_scalars(7, {{"train/loss", 0.25}, {"train/lr", 1e-3}});
    w.flush();
  }
  EXPECT_NE(path.find(dir + "/events.out.tfevents."), std::string::npos);
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t at = 0;
  int records = 0;
  while (at < file.size()) {
    ASSERT_LE(at + 12, file.size());
    const std::uint64_t length = read_le(file, at, 8);
    EXPECT_EQ(read_le(file, at + 8, 4), mask_crc32c(crc32c(file.data() + at, 8)));
    ASSERT_LE(at + 12 + length + 4, file.size());
    EXPECT_EQ(read_le(file, at + 12 + length, 4), mask_crc32c(crc32c(file.data() + at + 12, length)));
    const std::string event = file.substr(at + 12, length);
    if (records == 0) {
      EXPECT_NE(event.find("brain.Event:2"), std::string::npos);
    } else {
      EXPECT_NE(event.find("train/loss"), std::string::npos);
    }
    at += 12 + length + 4;
    ++records;
  }
  EXPECT_EQ(records, 2);
}

TEST(TensorBoard, UnwritableDirectoryIsAnError) {
  EXPECT_THROW(TensorBoardWriter("/proc/no/such/dir"), std::exception);
}

}  // namespace
}  // namespace hpct
