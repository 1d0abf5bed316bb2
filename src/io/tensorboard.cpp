// The tfevents encoding by hand: the few protobuf wire types an Event of scalars needs (varint,
// 64-bit, 32-bit, length-delimited), and TFRecord framing with masked CRC-32C.
#include "io/tensorboard.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/error.hpp"
#include "core/log.hpp"
#include "io/crc32c.hpp"

namespace hpct {

namespace {

// Field numbers of tensorflow/core/util/event.proto and summary.proto that we write.
enum EventField { kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5 };
enum SummaryField { kValue = 1 };
enum ValueField { kTag = 1, kSimpleValue = 2 };
enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_key(std::string& out, int field, WireType type) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(type));
}

// Little-endian whatever the host, as the wire format and the record framing require.
void put_fixed(std::string& out, std::uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

// <n> in the file name: two writers in one process and second never collide.
std::atomic<int> writers_opened{0};

}  // namespace

std::string encode_event(double wall_time, std::int64_t step, const std::string& file_version,
                         const std::vector<TensorBoardWriter::Scalar>& scalars) {
  std::string event;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &wall_time, sizeof(bits));
  put_key(event, kWallTime, kFixed64);
  put_fixed(event, bits, 8);
  put_key(event, kStep, kVarint);
  put_varint(event, static_cast<std::uint64_t>(step));  // int64: negatives as 10-byte two's complement
  if (!file_version.empty()) put_bytes(event, kFileVersion, file_version);
  if (scalars.empty()) return event;
  std::string summary, value;
  for (const auto& [tag, v] : scalars) {
    value.clear();
    put_bytes(value, kTag, tag);
    const auto f = static_cast<float>(v);
    std::uint32_t fbits = 0;
    std::memcpy(&fbits, &f, sizeof(fbits));
    put_key(value, kSimpleValue, kFixed32);
    put_fixed(value, fbits, 4);
    put_bytes(summary, kValue, value);
  }
  put_bytes(event, kSummary, summary);
  return event;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create tensorboard_dir: " + ec.message(), ExitCode::bad_input);
  path_ = dir + "/events.out.tfevents." + std::to_string(static_cast<long long>(std::time(nullptr))) + "." +
          host_name() + "." + std::to_string(static_cast<long long>(getpid())) + "." +
          std::to_string(writers_opened.fetch_add(1));
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) throw Error(path_ + ": cannot open TensorBoard event file for writing", ExitCode::bad_input);
  write_record(encode_event(wall_seconds(), 0, "brain.Event:2", {}));
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_) std::fclose(file_);
}

void TensorBoardWriter::write_scalars(std::int64_t step, const std::vector<Scalar>& scalars) {
  if (!file_ || scalars.empty()) return;
  write_record(encode_event(wall_seconds(), step, "", scalars));
}

void TensorBoardWriter::write_record(const std::string& event) {
  std::string header;
  put_fixed(header, event.size(), 8);
  const std::uint32_t length_crc = mask_crc32c(crc32c(header.data(), header.size()));
  put_fixed(header, length_crc, 4);
  std::string footer;
  put_fixed(footer, mask_crc32c(crc32c(event.data(), event.size())), 4);
  std::fwrite(header.data(), 1, header.size(), file_);
  std::fwrite(event.data(), 1, event.size(), file_);
  std::fwrite(footer.data(), 1, footer.size(), file_);
}

void TensorBoardWriter::flush() {
  if (!file_) return;
  if (std::fflush(file_) != 0 || std::ferror(file_)) {
    Log::rank_error(path_ + ": cannot write the TensorBoard event file (disk full?); no further events");
    std::fclose(file_);
    file_ = nullptr;
  }
}

}  // namespace hpct
