// Compressed text tables (Note [compressed text] in io/compressed_input.cpp): gzip (one member and
// several), zstd (several frames), bzip2 and xz (several streams) scan to the plain file's rows,
// lines and offsets; reads of sorted rows anywhere in the file, forward, backward and again, give
// the plain file's values, through restart points (gzip's inside a deflate stream) and the reader
// they continue; a file named .csv holding gzip is read as gzip; names say csv through .gz.
#include <bzlib.h>
#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

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
