// A text table's bytes, plain or decompressed, read forward and from any offset through the restart
// points the scan recorded (see compressed_input.hpp); the codecs are gzip_input.cpp,
// stream_inputs.cpp (zstd, bzip2) and xz_input.cpp.
#include "io/compressed_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"
#include "io/text_lines.hpp"

namespace hpct::io {

// Note [compressed text]
// Users' tables often come compressed (UCI's HIGGS.csv.gz: 2.6 GB, 7.5 GB as text; Kaggle's
// .csv.gz/.csv.zst; LIBSVM's .bz2/.xz), and pandas reads them as they are. The text sources read
// them too, told by their first bytes (a .csv holding gzip data is read as gzip), never holding the
// decompressed file in memory or on disk: several ranks of a node each scan the whole file
// (Note [streaming text]), and 7.5 GB each would not fit. The scan streams through the decoder and
// records offsets in the decompressed text, as for a plain file; a read then needs to get to those
// offsets without decompressing from the start for every batch. So the scan also records restart
// points:
// - gzip: every 8 MiB of output at a deflate block boundary, the compressed bit position and the
//   32 KiB window before it (zlib's inflate with Z_BLOCK, inflateGetDictionary, and for the restart
//   inflatePrime and inflateSetDictionary: the technique of zlib's examples/zran.c). 8 MiB: a
//   point costs 32 KiB, HIGGS 900 points (29 MB, a fifth of its row index of 12 bytes a row), and a
//   read that starts cold decompresses 4 MiB before its first row on average (about 10 ms).
// - zstd, bzip2: the start of every frame or stream at least 1 MiB after the last point (pzstd and
//   pbzip2 write many); a file of one frame or stream (what the plain tools write) has none, and
//   reads go forward from where a reader stands or from the start.
// - xz: the start of every block at least 1 MiB after the last point, from the file's indexes
//   (`xz -T2`, pixz and xz >= 5.6 write a block every 24 MiB of text at -6; Note [xz blocks] in
//   xz_input.cpp); a file of one block (xz 5.4's default) has none.
// Reads of a table come in ascending rows (an epoch's windows, a rank's block), so the table keeps
// its open readers (CompressedText::idle): a read takes the one standing nearest before its first
// row and goes on from there when no restart point between is nearer, so an epoch decompresses the
// file once whatever the number of windows, and the loader thread's reads and the evaluator's each
// keep their own. Damage (a bad code, a failed checksum, a file cut short) is found by the scan, which
// decodes every byte, and is an input error naming the file and the last whole line before it.
// Figures: docs/compressed-tables.md, "Cost".

namespace {
constexpr std::uint64_t kGzipSpacing = std::uint64_t{8} << 20;
constexpr std::uint64_t kStreamSpacing = std::uint64_t{1} << 20;

Compression compression_of(const unsigned char* h, std::size_t n) {
  if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) return Compression::gzip;
  if (n >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f && h[3] == 0xfd) return Compression::zstd;
  if (n >= 4 && h[0] == 'B' && h[1] == 'Z' && h[2] == 'h' && h[3] >= '1' && h[3] <= '9') return Compression::bzip2;
  if (n >= 6 && std::memcmp(h,
                            "\xfd"
                            "7zXZ\0",
                            6) == 0)
    return Compression::xz;
  return Compression::none;
}
}  // namespace

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::gzip: return "gzip";
    case Compression::zstd: return "zstd";
    case Compression::bzip2: return "bzip2";
    case Compression::xz: return "xz";
    default: return "";
  }
}

std::string without_compression_extension(const std::string& path) {
  for (const char* ext : {".gz", ".gzip", ".zst", ".zstd", ".bz2", ".xz"}) {
    const std::size_t n = std::strlen(ext);
    if (path.size() > n && path.compare(path.size() - n, n, ext) == 0) return path.substr(0, path.size() - n);
  }
  return path;
}

ByteInput::ByteInput(const std::string& path, CompressedText* record, const CompressedText* index)
    : path_(path), index_(index) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) {
    const int why = errno;
    input_error(clip_for_log(path, 200), 0, "", "cannot open file (" + std::string(std::strerror(why)) + ")");
  }
  unsigned char head[6] = {0, 0, 0, 0, 0, 0};
  const std::size_t n = std::fread(head, 1, sizeof head, file_);
  if (std::fseek(file_, 0, SEEK_SET) != 0) {
    const int why = errno;
    std::fclose(file_);
    input_error(path, 0, "", "cannot read file (" + std::string(std::strerror(why)) + ")");
  }
  if (n >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0) {
    std::fclose(file_);
    input_error(path, 0, "",
                "is a ZIP archive, not a text table: unzip it (the text sources read a table compressed alone: "
                "gzip, zstd, bzip2, xz)");
  }
  kind_ = compression_of(head, n);
  std::vector<RestartPoint>* points = record ? &record->points : nullptr;
  if (record) record->kind = kind_;
  try {
    // The scan says so once (zstd's checksum is optional; the other formats' are not).
    if (record && kind_ == Compression::zstd && zstd_without_checksum(file_))
      Log::info(path +
                ": note: the zstd data has no checksum (written with zstd --no-check, or by Python's "
                "zstandard without write_checksum=True): a damaged byte may pass unseen");
    switch (kind_) {
      case Compression::gzip: decoder_ = gzip_decoder(file_, points, kGzipSpacing); break;
      case Compression::zstd: decoder_ = zstd_decoder(file_, points, kStreamSpacing); break;
      case Compression::bzip2: decoder_ = bzip2_decoder(file_, points, kStreamSpacing); break;
      case Compression::xz: decoder_ = xz_decoder(file_, points, kStreamSpacing); break;
      case Compression::none: break;
    }
  } catch (const DamagedData& e) {  // the scan's open reads zstd's first header, xz's indexes
    std::fclose(file_);
    input_error(path, 0, "", e.what());
  } catch (...) {
    std::fclose(file_);
    throw;
  }
}

ByteInput::~ByteInput() {
  decoder_.reset();
  if (file_) std::fclose(file_);
}

std::size_t ByteInput::read(char* out, std::size_t n) {
  std::size_t got = 0;
  if (!decoder_) {
    got = std::fread(out, 1, n, file_);
    if (got == 0 && std::ferror(file_)) throw DamagedData(std::string("read error: ") + std::strerror(errno));
  } else {
    got = decoder_->read(out, n);
    decoded_ += got;
  }
  pos_ += got;
  return got;
}

void ByteInput::seek(std::uint64_t to) {
  if (!decoder_) {
    std::clearerr(file_);
    if (fseeko(file_, static_cast<off_t>(to), SEEK_SET) != 0)
      throw DamagedData(std::string("cannot seek: ") + std::strerror(errno));
    pos_ = to;
    return;
  }
  // The nearest restart point at or before `to`; the reader goes on from where it stands when that
  // lies between the point and `to`.
  static const RestartPoint start;
  const RestartPoint* from = &start;
  if (index_ && !index_->points.empty()) {
    const auto it = std::upper_bound(index_->points.begin(), index_->points.end(), to,
                                     [](std::uint64_t v, const RestartPoint& p) { return v < p.out; });
    if (it != index_->points.begin()) from = &*std::prev(it);
  }
  if (pos_ > to || pos_ < from->out) {
    decoder_->restart(*from);
    pos_ = from->out;
  }
  std::vector<char> skip(std::min<std::uint64_t>(to - pos_, std::uint64_t{1} << 20));
  std::uint64_t since_beat = 0;
  while (pos_ < to) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(to - pos_, skip.size()));
    const std::size_t got = decoder_->read(skip.data(), want);
    if (got == 0) throw DamagedData("the data ends before rows the scan found there (the file changed since?)");
    pos_ += got;
    decoded_ += got;
    since_beat += got;
    if (since_beat >= (std::uint64_t{64} << 20)) {
      since_beat = 0;
      Heartbeat::beat_current("reading text rows", path_);  // Note [beats from the open]
    }
  }
}

std::shared_ptr<DataLines> take_reader(CompressedText& c, const std::string& file, std::uint64_t at) {
  {
    const std::lock_guard<std::mutex> hold(c.idle_lock);
    auto best = c.idle.end();
    for (auto it = c.idle.begin(); it != c.idle.end(); ++it)
      if ((*it)->reach() <= at && (best == c.idle.end() || (*it)->reach() > (*best)->reach())) best = it;
    if (best != c.idle.end()) {
      std::shared_ptr<DataLines> r = std::move(*best);
      c.idle.erase(best);
      return r;
    }
  }
  return std::make_shared<DataLines>(file, nullptr, &c);
}

void give_back_reader(CompressedText& c, std::shared_ptr<DataLines> reader) {
  // Two: the loader thread's reads and the evaluator's each keep theirs. More would hold memory
  // for nothing: a reader holds 1 MiB of text and its decoder's window (xz -9: 64 MiB).
  constexpr std::size_t kIdleReaders = 2;
  const std::lock_guard<std::mutex> hold(c.idle_lock);
  if (c.idle.size() >= kIdleReaders) c.idle.erase(c.idle.begin());
  c.idle.push_back(std::move(reader));
}

}  // namespace hpct::io
