// The fixed-order chunk sums of a Linear layer's parameter gradients (Note [fixed-order chunk sums]
// in nn/layers/linear_chunk_sums.cpp): bit for bit the plain loops of their definition, per chunk
// and in the tree, for every tile edge (widths and heights that are not multiples of the host
// tiles), with and without bias, added onto what the targets held; and a chunk's sums are the same
// whether it runs alone or among other chunks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.hpp"
#include "nn/layers/linear_chunk_sums.hpp"
#include "support/device_copy.hpp"

using namespace hpct;

namespace {

template <class Scalar>
std::vector<Scalar> normals(std::size_t n, std::uint64_t key) {
  std::vector<Scalar> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<Scalar>(rng::normal(rng::hash(key, i)));
  return v;
}


// The definition, element by element: chunk c's sum over its rows in row order from +0, each step
// one fused multiply-add where the build's kernel fuses, else the product rounded on its own
// (volatile: no contraction into an FMA); the bias (i = -1) sums dz alone.
template <class Scalar>
Scalar chunk_sum(const std::vector<Scalar>& dz, const std::vector<Scalar>& x, int out, int in, int rows, int c,
                 int o, int i) {
  const bool fma = nn::linear_chunk_sums_fma();
  Scalar s = 0;
  for (int r = 0; r < rows; ++r) {
    const std::size_t row = static_cast<std::size_t>(c) * rows + r;
    const Scalar d = dz[row * out + o];
    if (i < 0) {
      s = s + d;
    } else if (fma) {
      s = std::fma(d, x[row * in + i], s);
    } else {
      volatile Scalar p = d * x[row * in + i];
      s = s + p;
    }
  }
  return s;
}

// The tree as rank_invariant's node_of_slots sums a rank's slots: w = S/2, ..., 1, slot k += slot k + w.
template <class Scalar>
Scalar tree_root(std::vector<Scalar> slot) {
  for (std::size_t w = slot.size() / 2; w >= 1; w /= 2)
    for (std::size_t k = 0; k < w; ++k) slot[k] = slot[k] + slot[k + w];
  return slot[0];
}

template <class Scalar>
bool same_bits(Scalar a, Scalar b) {
  return std::memcmp(&a, &b, sizeof(Scalar)) == 0;
}

// Runs the kernel on random data into targets that start non-zero, and compares with the definition.
// `scale` multiplies dz and x: 1e-25 makes every product underflow to +-0, so a tree's root may be
// -0, which the target receives as +0 (adding it to the zeroed target would give that).
template <class Scalar>
void check(int out, int in, int rows, int chunks, bool tree, bool bias, Scalar scale = 1) {
  SCOPED_TRACE(::testing::Message() << out << "x" << in << ", " << chunks << " chunks of " << rows
                                    << (tree ? " rows, tree" : " rows") << (bias ? ", bias" : "") << ", scale "
                                    << scale);
  const auto n = static_cast<std::size_t>(rows) * chunks;
  std::vector<Scalar> dz = normals<Scalar>(n * out, 1), x = normals<Scalar>(n * in, 2);
  for (Scalar& v : dz) v *= scale;
  for (Scalar& v : x) v *= scale;
  const int targets = tree ? 1 : chunks;
  int negative_zero_roots = 0;
  std::vector<std::vector<Scalar>> w0, b0;
  std::vector<View1<Scalar>> w, b;
  std::vector<Scalar*> wp, bp;
  for (int t = 0; t < targets; ++t) {
    w0.push_back(normals<Scalar>(static_cast<std::size_t>(out) * in, 10 + t));
    b0.push_back(normals<Scalar>(static_cast<std::size_t>(out), 100 + t));
    w.push_back(test::device_copy(w0.back()));
    b.push_back(test::device_copy(b0.back()));
    wp.push_back(w.back().data());
    bp.push_back(b.back().data());
  }
  const View1<Scalar> dz_d = test::device_copy(dz), x_d = test::device_copy(x);
  nn::linear_chunk_sums(dz_d.data(), x_d.data(), out, in, rows, chunks, tree, wp.data(),
                        bias ? bp.data() : nullptr);
  for (int t = 0; t < targets; ++t) {
    const std::vector<Scalar> wh = test::host_copy(w[static_cast<std::size_t>(t)]),
                              bh = test::host_copy(b[static_cast<std::size_t>(t)]);
    for (int o = 0; o < out; ++o)
      for (int i = -1; i < in; ++i) {  // i = -1: the bias
        Scalar expected;
        if (tree) {
          std::vector<Scalar> leaves;
          for (int c = 0; c < chunks; ++c) leaves.push_back(chunk_sum(dz, x, out, in, rows, c, o, i));
          expected = tree_root(leaves);
          if (expected == 0 && std::signbit(expected)) ++negative_zero_roots;
        } else {
          expected = chunk_sum(dz, x, out, in, rows, t, o, i);
        }
        // Tree: the targets are set to 0 + root (whatever they held); else root is added to them.
        const auto tt = static_cast<std::size_t>(t);
        const std::size_t e = static_cast<std::size_t>(o) * in + i;
        const Scalar before = i < 0 ? b0[tt][static_cast<std::size_t>(o)] : w0[tt][e];
        if (i < 0 && !bias) expected = before;
        else expected = (tree ? Scalar(0) : before) + expected;
        const Scalar got = i < 0 ? bh[static_cast<std::size_t>(o)] : wh[e];
        ASSERT_TRUE(same_bits(got, expected))
            << "target " << t << ", element (" << o << ", " << i << "): " << got << " != " << expected;
      }
  }
  if (tree && scale < Scalar(1e-20)) {
    EXPECT_GT(negative_zero_roots, 0) << "no root of -0 was tried";
  }
}

}  // namespace

TEST(LinearChunkSums, PerChunkSumsAreTheDefinitionBitForBit) {
  // Widths and heights around the host tiles (blocks of 64 and 4 rows, 32 columns), the denoiser's shapes.
  for (const auto& [out, in] :
       std::vector<std::pair<int, int>>{{256, 256}, {256, 7}, {100, 40}, {13, 70}, {7, 33}, {3, 1}})
    for (const int rows : {1, 3, 8})
      for (const int chunks : {1, 3, 5}) check<float>(out, in, rows, chunks, false, true);
  check<float>(9, 40, 4, 2, false, false);
  check<double>(6, 21, 5, 3, false, true);
}

TEST(LinearChunkSums, TreeIsRankInvariantNodeOfTheChunkSums) {
  for (const auto& [out, in] : std::vector<std::pair<int, int>>{{256, 256}, {256, 32}, {13, 70}, {3, 1}})
    for (const int chunks : {1, 2, 4, 8}) check<float>(out, in, 8, chunks, true, true);
  check<float>(5, 17, 2, 64, true, true);
  check<float>(9, 40, 4, 4, true, false);
  check<double>(6, 21, 5, 4, true, true);
  check<float>(64, 40, 1, 2, true, true, 1e-25f);  // roots of -0
}

// A chunk's sums do not depend on the chunks beside it: chunk c of a call over all chunks equals a
// call over chunk c alone (what rank_invariant needs: a chunk's bits on any rank count).
TEST(LinearChunkSums, ChunkAloneEqualsChunkAmongOthers) {
  const int out = 37, in = 70, rows = 8, chunks = 4;
  const auto n = static_cast<std::size_t>(rows) * chunks;
  const View1<float> dz = test::device_copy(normals<float>(n * out, 3)),
                     x = test::device_copy(normals<float>(n * in, 4));
  std::vector<View1<float>> together, alone;
  std::vector<float*> wp, bp;
  for (int c = 0; c < chunks; ++c) {
    together.emplace_back("w", static_cast<std::size_t>(out) * (in + 1));
    wp.push_back(together.back().data());
    bp.push_back(together.back().data() + static_cast<std::size_t>(out) * in);
  }
  nn::linear_chunk_sums(dz.data(), x.data(), out, in, rows, chunks, false, wp.data(), bp.data());
  for (int c = 0; c < chunks; ++c) {
    alone.emplace_back("w", static_cast<std::size_t>(out) * (in + 1));
    float* w1 = alone.back().data();
    float* b1 = w1 + static_cast<std::size_t>(out) * in;
    const auto row0 = static_cast<std::size_t>(c) * rows;
    nn::linear_chunk_sums(dz.data() + row0 * out, x.data() + row0 * in, out, in, rows, 1, true, &w1, &b1);
    const std::vector<float> got = test::host_copy(alone.back()),
                             want = test::host_copy(together[static_cast<std::size_t>(c)]);
    ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "chunk " << c;
  }
}
