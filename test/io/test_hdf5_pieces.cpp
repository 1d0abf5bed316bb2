// h5::write_in_pieces against h5::write: the same file byte for byte for pieces that do and do not
// divide the rows, one row a piece, datasets of one to three dimensions, an empty one, attributes
// after them (Note [a contiguous dataset in pieces]); and the spool file the pieces come from.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "io/spool_file.hpp"
#include "test_paths.hpp"

namespace hpct {
namespace {

namespace fs = std::filesystem;

std::string scratch(const std::string& name) {
  const fs::path dir = fs::path(test::binary_dir()) / "test" / "scratch_hdf5_pieces";
  fs::create_directories(dir);
  return (dir / name).string();
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class T>
std::vector<T> ramp(std::size_t n, double scale) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<double>(i) * scale - 7);
  return v;
}

// A scene file's shape: ragged agent states [37, 4, 5], types [37], an empty [0, 11, 2], offsets.
struct Arrays {
  std::vector<float> state = ramp<float>(37 * 4 * 5, 0.25);
  std::vector<long long> type = ramp<long long>(37, 3);
  std::vector<std::int32_t> valid = ramp<std::int32_t>(37 * 4, 1);
  std::vector<float> none;
};

void write_whole(const std::string& path, const Arrays& a) {
  const h5::File f = h5::File::create(path);
  h5::write(f, "agent_state", {37, 4, 5}, a.state.data());
  h5::write(f, "agent_type", {37}, a.type.data());
  h5::write(f, "agent_valid", {37, 4}, a.valid.data());
  h5::write(f, "map_polyline", {0, 11, 2}, a.none.data());
  h5::write_attr(f, "/", "step_seconds", 0.1);
}

// The same arrays through write_in_pieces, `piece_bytes` a piece; counts the pieces filled.
std::size_t write_pieces(const std::string& path, const Arrays& a, std::size_t piece_bytes) {
  std::size_t pieces = 0;
  const auto from = [&pieces](const auto& v, std::size_t row) {
    auto next = v.begin();
    return [&pieces, next, row](auto* out, std::uint64_t rows) mutable {
      ++pieces;
      std::copy(next, next + static_cast<std::ptrdiff_t>(rows * row), out);
      next += static_cast<std::ptrdiff_t>(rows * row);
    };
  };
  const h5::File f = h5::File::create(path);
  h5::write_in_pieces<float>(f, "agent_state", {37, 4, 5}, from(a.state, 20), piece_bytes);
  h5::write_in_pieces<long long>(f, "agent_type", {37}, from(a.type, 1), piece_bytes);
  h5::write_in_pieces<std::int32_t>(f, "agent_valid", {37, 4}, from(a.valid, 4), piece_bytes);
  h5::write_in_pieces<float>(f, "map_polyline", {0, 11, 2}, from(a.none, 22), piece_bytes);
  h5::write_attr(f, "/", "step_seconds", 0.1);
  return pieces;
}

TEST(Hdf5Pieces, TheSameFileAsOneWriteWhateverThePieces) {
  const Arrays a;
  write_whole(scratch("whole.h5"), a);
  const std::vector<char> whole = bytes_of(scratch("whole.h5"));
  ASSERT_GT(whole.size(), 37u * 20 * 4);
  // 1 byte: a row a piece; 250 bytes: 3 state rows (240 bytes) and a last piece of 1; whole arrays.
  for (const std::size_t piece : {std::size_t{1}, std::size_t{250}, std::size_t{1} << 20}) {
    const std::string path = scratch("pieces_" + std::to_string(piece) + ".h5");
    const std::size_t pieces = write_pieces(path, a, piece);
    EXPECT_EQ(pieces, piece == 1 ? 37u * 3 : piece == 250 ? 13u + 2 + 3 : 3u) << piece;
    EXPECT_TRUE(bytes_of(path) == whole) << "pieces of " << piece << " bytes";
    const h5::File f = h5::File::open_read(path);
    EXPECT_EQ(h5::read_all<float>(f, "agent_state"), a.state);
    EXPECT_EQ(h5::read_all<long long>(f, "agent_type"), a.type);
  }
}

TEST(Hdf5Pieces, SpoolFileGivesBackWhatWasAppendedAndHasNoName) {
  const fs::path folder = scratch("spool");  // its own, to list: the other tests write beside it
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string path = (folder / "values.spool").string();
  const std::vector<float> v = ramp<float>(1000, 0.5);
  {
    io::SpoolFile spool(path);
    // Note [nameless spool]: nothing in the folder, so a killed process leaves nothing there.
    EXPECT_TRUE(fs::is_empty(folder)) << "the spool has a name in its folder";
    spool.append_values(v.data(), 300);
    spool.append_values(v.data() + 300, 0);
    spool.append_values(v.data() + 300, 700);
    EXPECT_EQ(spool.size(), 1000u * sizeof(float));
    std::vector<float> back(1000);
    spool.read(back.data(), 999 * sizeof(float));  // across the appends' boundaries
    spool.read(back.data() + 999, sizeof(float));
    EXPECT_EQ(back, v);
    float more = 0;
    EXPECT_THROW(spool.read(&more, sizeof(float)), Error);  // past the end
    EXPECT_THROW(spool.append_values(v.data(), 1), Error);  // appending ended with the first read
    EXPECT_TRUE(fs::is_empty(folder));
  }
  EXPECT_TRUE(fs::is_empty(folder));
  EXPECT_THROW(io::SpoolFile(scratch("no_such_dir/x.spool")), Error);
}

}  // namespace
}  // namespace hpct
