// Compressed text tables (Note [compressed text] in io/compressed_input.cpp): gzip (one member and
// several), zstd (several frames), bzip2 and xz (several streams) scan to the plain file's rows,
// lines and offsets; reads of sorted rows anywhere in the file, forward, backward and again, give
// the plain file's values, through restart points (gzip's inside a deflate stream, xz's at blocks)
// and the reader they continue; a read from the middle of a multi-block .xz decodes from a block near
// it, not from the top; a damaged block is refused at the scan naming the file and line, a bad
// block check at a read; a file named .csv holding gzip is read as gzip; names say csv through .gz.
#include <bzlib.h>
#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/compressed_input.hpp"
#include "io/text_tables.hpp"
#include "test_paths.hpp"

namespace hpct::io {
namespace {

std::string scratch(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(hpct::test::binary_dir()) / "test" /
                                    "scratch_compressed_text";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A table of `rows` rows, about 77 bytes each, with a header, comments and blank lines.
std::string table_text(int rows) {
  std::string s = "y,a,b,c,d,e,f\n";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  char line[256];
  for (int r = 0; r < rows; ++r) {
    if (r % 997 == 0) s += "# a comment\n\n";
    std::snprintf(line, sizeof line, "%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", r % 2, u(rng), u(rng), u(rng), u(rng),
                  u(rng), u(rng));
    s += line;
  }
  return s;
}

std::string gzip_member(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string zstd_frame(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 1));
  return out;
}

std::string bzip2_stream(const std::string& text) {
  std::string out(text.size() + text.size() / 100 + 600, '\0');
  auto n = static_cast<unsigned>(out.size());
  EXPECT_EQ(BZ2_bzBuffToBuffCompress(out.data(), &n, const_cast<char*>(text.data()),
                                     static_cast<unsigned>(text.size()), 1, 0, 0),
            BZ_OK);
  out.resize(n);
  return out;
}

std::string xz_stream(const std::string& text) {
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  std::size_t n = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(text.data()),
                                    text.size(), reinterpret_cast<uint8_t*>(out.data()), &n, out.size()),
            LZMA_OK);
  out.resize(n);
  return out;
}

// One xz stream of blocks of `block_size` text bytes, as `xz -T2` writes (liblzma's threaded
// encoder: the same code).
std::string xz_blocks(const std::string& text, std::uint64_t block_size, lzma_check check) {
  lzma_mt mt{};
  mt.threads = 2;
  mt.block_size = block_size;
  mt.preset = 0;
  mt.check = check;
  lzma_stream s = LZMA_STREAM_INIT;
  EXPECT_EQ(lzma_stream_encoder_mt(&s, &mt), LZMA_OK);
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  s.next_in = reinterpret_cast<const uint8_t*>(text.data());
  s.avail_in = text.size();
  s.next_out = reinterpret_cast<uint8_t*>(out.data());
  s.avail_out = out.size();
  lzma_ret r = LZMA_OK;
  while (r == LZMA_OK) r = lzma_code(&s, LZMA_FINISH);
  EXPECT_EQ(r, LZMA_STREAM_END);
  out.resize(s.total_out);
  lzma_end(&s);
  return out;
}

// The text cut into `parts` pieces at line ends, each compressed alone and the pieces concatenated
// (pigz, pzstd, pbzip2, `cat a.xz b.xz`).
template <class F>
std::string in_parts(const std::string& text, int parts, F compress) {
  std::string out;
  std::size_t at = 0;
  for (int p = 1; p <= parts; ++p) {
    std::size_t end = p == parts ? text.size() : text.find('\n', text.size() * p / parts) + 1;
    out += compress(text.substr(at, end - at));
    at = end;
  }
  return out;
}

struct Read {
  std::vector<float> x, y;
};

Read read(const TextLayout& t, const std::vector<std::uint64_t>& rows) {
  Read r;
  r.x.resize(rows.size() * static_cast<std::size_t>(t.cols));
  r.y.resize(rows.size());
  read_text_rows(t, rows.data(), rows.size(), r.x.data(), r.y.data());
  return r;
}

// Scans `path` and checks it against the plain file's scan; then reads of sorted rows from
// everywhere in the file, in the order an epoch's windows come, then backward, then one row.
void expect_same_table(const std::string& path, const TextLayout& plain, std::size_t min_points) {
  SCOPED_TRACE(path);
  TextOptions opt;
  opt.header = true;
  const TextLayout t = scan_text(path, opt);
  ASSERT_TRUE(t.compressed);
  EXPECT_GE(t.compressed->points.size(), min_points);
  EXPECT_EQ(t.rows, plain.rows);
  EXPECT_EQ(t.cols, plain.cols);
  EXPECT_EQ(t.offset, plain.offset);
  EXPECT_EQ(t.line, plain.line);
  EXPECT_EQ(t.names, plain.names);
  std::mt19937 rng(3);
  std::vector<std::uint64_t> rows;
  for (std::uint64_t r = 0; r < static_cast<std::uint64_t>(t.rows); ++r)
    if (rng() % 50 == 0) rows.push_back(r);
  rows.push_back(static_cast<std::uint64_t>(t.rows) - 1);
  // Windows of an epoch, ascending; then the same windows from the last to the first.
  std::vector<std::vector<std::uint64_t>> windows;
  for (std::size_t w = 0; w < rows.size(); w += rows.size() / 5 + 1)
    windows.emplace_back(rows.begin() + static_cast<std::ptrdiff_t>(w),
                         rows.begin() +
                             static_cast<std::ptrdiff_t>(std::min(rows.size(), w + rows.size() / 5 + 1)));
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t k = 0; k < windows.size(); ++k) {
      const auto& w = windows[pass == 0 ? k : windows.size() - 1 - k];
      const Read a = read(t, w), b = read(plain, w);
      ASSERT_EQ(a.x, b.x) << "pass " << pass << " window " << k;
      ASSERT_EQ(a.y, b.y);
    }
  }
  const std::vector<std::uint64_t> one = {static_cast<std::uint64_t>(t.rows) / 2};
  EXPECT_EQ(read(t, one).x, read(plain, one).x);
}

// `text` written as the plain file `name` (a header line first) and scanned: what its compressed
// copies must read as.
TextLayout plain_table(const std::string& name, const std::string& text) {
  write_bytes(scratch(name), text);
  TextOptions opt;
  opt.header = true;
  return scan_text(scratch(name), opt);
}

// A compressed copy of a plain table: its file name, its bytes, the restart points it has at least.
struct Copy {
  std::string name, bytes;
  std::size_t min_points;
};

void expect_copies_read_as(const TextLayout& plain, const std::vector<Copy>& copies) {
  for (const Copy& c : copies) {
    write_bytes(scratch(c.name), c.bytes);
    expect_same_table(scratch(c.name), plain, c.min_points);
  }
}

TEST(CompressedText, EveryFormatReadsAsThePlainFile) {
  const std::string text = table_text(260000);  // 20 MB: gzip's points every 8 MiB
  ASSERT_GT(text.size(), 18u << 20);
  const TextLayout plain = plain_table("t.csv", text);
  EXPECT_FALSE(plain.compressed);
  EXPECT_EQ(plain.rows, 260000);
  expect_copies_read_as(plain, {
                                   {"t.csv.gz", gzip_member(text), 2},
                                   // Three members; restart points inside the second and third.
                                   {"members.csv.gz", in_parts(text, 3, gzip_member), 2},
                                   // gzip data under a plain name: told by its first bytes.
                                   {"gzip_named.csv", gzip_member(text), 2},
                                   // One zstd frame: no point; read forward from the reader or the start.
                                   {"t.csv.zst", zstd_frame(text), 0},
                                   {"frames.csv.zst", in_parts(text, 8, zstd_frame), 7},
                               });
}

TEST(CompressedText, Bzip2AndXzStreams) {
  // Smaller: bzip2 and xz compress slowly. Streams of 1.2 MB, a point at each.
  const std::string text = table_text(48000);
  const TextLayout plain = plain_table("s.csv", text);
  expect_copies_read_as(plain, {
                                   {"s.csv.bz2", bzip2_stream(text), 0},
                                   {"streams.csv.bz2", in_parts(text, 3, bzip2_stream), 2},
                                   {"s.csv.xz", xz_stream(text), 0},
                                   {"streams.csv.xz", in_parts(text, 3, xz_stream), 2},
                               });
}

// The bytes of `path` as a string.
std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The decompressed bytes a fresh reader of `path` decodes to give the `n` bytes at `at` (checked
// against `text`), with the restart points of `scan` (Note [xz blocks]).
std::uint64_t decoded_for(const std::string& path, const CompressedText& scan, const std::string& text,
                          std::uint64_t at, std::size_t n) {
  ByteInput in(path, nullptr, &scan);
  in.seek(at);
  std::string got(n, '\0');
  std::size_t have = 0;
  while (have < n) {
    const std::size_t k = in.read(got.data() + have, n - have);
    if (k == 0) break;
    have += k;
  }
  EXPECT_EQ(got, text.substr(at, n)) << path << " at " << at;
  return in.decoded();
}

// Scans `path` as the text sources do: the restart points.
void scan_bytes(const std::string& path, CompressedText& scan) {
  ByteInput in(path, &scan, nullptr);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), buf.size()) > 0) {
  }
}

TEST(CompressedText, XzBlocksAreRestartPoints) {
  const std::string text = table_text(48000);  // 3.7 MB
  const TextLayout plain = plain_table("b.csv", text);
  // Blocks of 256 KiB (a point every 4th: 1 MiB apart); two streams, CRC32 and SHA-256 (the check
  // a block's header does not say), 8 bytes of stream padding between (`cat a.xz b.xz`, pixz).
  const std::size_t half = text.find('\n', text.size() / 2) + 1;
  const std::string blocks = xz_blocks(text, 256 << 10, LZMA_CHECK_CRC64),
                    two_streams = xz_blocks(text.substr(0, half), 256 << 10, LZMA_CHECK_CRC32) +
                                  std::string(8, '\0') + xz_blocks(text.substr(half), 256 << 10, LZMA_CHECK_SHA256);
  std::vector<Copy> copies = {{"blocks.csv.xz", blocks, 3}, {"two_streams.csv.xz", two_streams, 3}};
  // The real xz's -T2 --block-size, where the command is here.
  const std::string by_xz = scratch("by_xz.csv.xz");
  if (std::system(("xz -T2 --block-size=300KiB -c " + scratch("b.csv") + " > " + by_xz).c_str()) == 0)
    copies.push_back({"by_xz.csv.xz", file_bytes(by_xz), 3});
  else std::printf("note: no xz command; the threaded encoder's blocks alone\n");
  copies.push_back({"one_block.csv.xz", xz_stream(text), 0});
  expect_copies_read_as(plain, copies);

  // A read three quarters in decodes from the block point before it, not from the top; a file of
  // one block decodes everything before it.
  const std::uint64_t at = text.size() * 3 / 4;
  for (const Copy& c : copies) {
    CompressedText scan;
    scan_bytes(scratch(c.name), scan);
    const std::uint64_t cost = decoded_for(scratch(c.name), scan, text, at, 5000);
    if (c.min_points > 0) EXPECT_LT(cost, (std::uint64_t{1} << 20) + (300 << 10) + 5000) << c.name;
    else EXPECT_GE(cost, at + 5000) << c.name;
  }
}

TEST(CompressedText, DamagedXzBlocks) {
  const std::string text = table_text(48000);
  write_bytes(scratch("d.csv"), text);
  const std::string good = xz_blocks(text, 256 << 10, LZMA_CHECK_CRC64);
  write_bytes(scratch("d.csv.xz"), good);
  CompressedText scan;
  scan_bytes(scratch("d.csv.xz"), scan);
  ASSERT_GE(scan.points.size(), 3u);
  TextOptions opt;
  opt.header = true;
  {
    // A byte flipped inside a middle block: the scan refuses the file, naming it and the last
    // whole line before the block (the block decoded whole before its check fails, or earlier).
    std::string bad = good;
    const RestartPoint& p = scan.points[1];
    bad[(p.in + scan.points[2].in) / 2] ^= 0x10;
    write_bytes(scratch("flipped.csv.xz"), bad);
    try {
      scan_text(scratch("flipped.csv.xz"), opt);
      ADD_FAILURE() << "a damaged block passed the scan";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(scratch("flipped.csv.xz") + ":", 0), 0u) << what;
      EXPECT_NE(what.find("the xz data is damaged"), std::string::npos) << what;
      const int line = std::atoi(what.c_str() + scratch("flipped.csv.xz").size() + 1);
      const int lines_before = static_cast<int>(std::count(text.begin(), text.begin() + p.out, '\n'));
      EXPECT_GT(line, lines_before / 2) << what;  // named in the middle of the file
      EXPECT_LE(line, static_cast<int>(std::count(text.begin(), text.begin() + scan.points[2].out, '\n'))) << what;
    }
  }
  {
    // The file changed after the scan, a block's check flipped: a read through the block from the
    // point before it throws (the block decoder checks as the stream decoder does).
    std::string bad = good;
    bad[scan.points[2].in - 1] ^= 0x01;  // the last byte of the check of the block before point 2
    write_bytes(scratch("d.csv.xz"), bad);
    EXPECT_THROW(decoded_for(scratch("d.csv.xz"), scan, text, scan.points[1].out,
                             scan.points[2].out - scan.points[1].out + 1),  // past the check
                 DamagedData);
  }
}

TEST(CompressedText, NamesSayTheFormatThroughTheCompressorsExtension) {
  TextFormat f{};
  ASSERT_TRUE(format_from_extension("data/HIGGS.csv.gz", f));
  EXPECT_EQ(f, TextFormat::csv);
  ASSERT_TRUE(format_from_extension("a.tsv.zst", f));
  EXPECT_EQ(f, TextFormat::tsv);
  ASSERT_TRUE(format_from_extension("news20.svm.bz2", f));
  EXPECT_EQ(f, TextFormat::libsvm);
  ASSERT_TRUE(format_from_extension("a.libsvm.xz", f));
  EXPECT_EQ(f, TextFormat::libsvm);
  EXPECT_FALSE(format_from_extension("archive.gz", f));
  EXPECT_FALSE(format_from_extension("a.csv.zip", f));
  EXPECT_EQ(without_compression_extension("x.csv"), "x.csv");
}

}  // namespace
}  // namespace hpct::io
