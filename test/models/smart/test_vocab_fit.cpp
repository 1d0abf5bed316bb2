// The fitted motion vocabulary (motion_vocab_fit kdisks, Note [fitted vocabulary]): k-disks covers
// its share of the motions with at most motion_vocab centres, deterministically; a token is exactly
// the nearest centre; the stored tables rebuild the vocabulary; masked steps give no motions; and on
// walkers the fitted vocabulary reconstructs held-out trajectories far better than the grid; a type
// gets no more tokens than its motions teach.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/rng.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5.hpp"
#include "models/smart/vocab_fit.hpp"
#include "smart_tiny.hpp"
#include "support/test_support.hpp"

using namespace hpct;
using smart::Motion;

namespace {

// Clustered motions: a dense blob, a sparse shell and a few far outliers.
std::vector<Motion> clustered(std::size_t n, std::uint64_t seed) {
  std::vector<Motion> m(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto u = [&](int k) { return rng::uniform(rng::hash(seed, i, static_cast<std::uint64_t>(k))) - 0.5; };
    const double spread = i % 100 == 0 ? 20 : i % 5 == 0 ? 2 : 0.2;
    m[i] = {0.7 + spread * u(0), spread * 0.3 * u(1), spread * 0.2 * u(2)};
  }
  return m;
}

double d2(const Motion& a, const Motion& b, double s) {
  return (a.dx - b.dx) * (a.dx - b.dx) + (a.dy - b.dy) * (a.dy - b.dy) + s * s * (a.dh - b.dh) * (a.dh - b.dh);
}

// Walkers at 10 Hz: a pace of 1.0-1.6 m/s and a gentle curve, both wandering, 9 s each
// ([walkers][91] poses).
std::vector<std::vector<std::array<double, 3>>> walkers(int count, std::uint64_t seed) {
  std::vector<std::vector<std::array<double, 3>>> w(static_cast<std::size_t>(count));
  for (int a = 0; a < count; ++a) {
    auto u = [&](int k) { return rng::uniform(rng::hash(seed, static_cast<std::uint64_t>(a), k)); };
    double x = 0, y = 0, h = 6.283 * u(0);
    double v = 1.0 + 0.6 * u(1), turn = 0.3 * (u(2) - 0.5);
    for (int s = 0; s <= 90; ++s) {
      w[static_cast<std::size_t>(a)].push_back({x, y, h});
      x += 0.1 * v * std::cos(h), y += 0.1 * v * std::sin(h), h += 0.1 * turn;
      v = std::clamp(v + 0.05 * (u(3 + 2 * s) - 0.5), 0.8, 1.8), turn += 0.1 * (u(4 + 2 * s) - 0.5);
    }
  }
  return w;
}

// Mean position error of the drift-free token chain (Note [drift-free tokens]) against the truth.
double reconstruction_error(const smart::MotionVocab& vocab,
                            const std::vector<std::vector<std::array<double, 3>>>& w) {
  double sum = 0;
  int n = 0;
  for (const auto& p : w) {
    double x = p[0][0], y = p[0][1], h = p[0][2];
    for (std::size_t k = 5; k < p.size(); k += 5) {
      vocab.apply(1, vocab.tokenize(1, x, y, h, p[k][0], p[k][1], p[k][2]), x, y, h);
      sum += std::hypot(x - p[k][0], y - p[k][1]), ++n;
    }
  }
  return sum / n;
}

}  // namespace

TEST(VocabFit, KDisksCoverWithAtMostVocabCentresDeterministically) {
  const std::vector<Motion> m = clustered(20000, 3);
  const double s = 0.5;
  const smart::KDisks k = smart::fit_kdisks(m, 256, s, 11);
  ASSERT_GT(k.centres.size(), 200u);
  ASSERT_LE(k.centres.size(), 256u);
  ASSERT_GT(k.radius, 0);
  std::size_t covered = 0;
  for (const Motion& q : m) {
    bool in = false;
    for (const Motion& c : k.centres) in = in || d2(q, c, s) <= k.radius * k.radius;
    covered += in;
  }
  EXPECT_GE(static_cast<double>(covered), smart::kDiskCover * m.size());
  // Every centre is a motion of the data.
  for (const Motion& c : k.centres) {
    bool found = false;
    for (const Motion& q : m) found = found || (q.dx == c.dx && q.dy == c.dy && q.dh == c.dh);
    EXPECT_TRUE(found);
  }
  const smart::KDisks again = smart::fit_kdisks(m, 256, s, 11);
  ASSERT_EQ(again.centres.size(), k.centres.size());
  EXPECT_EQ(again.radius, k.radius);
  for (std::size_t i = 0; i < k.centres.size(); ++i) EXPECT_EQ(again.centres[i].dx, k.centres[i].dx);
  const smart::KDisks other = smart::fit_kdisks(m, 256, s, 12);
  EXPECT_NE(other.centres[0].dx, k.centres[0].dx);
  // Ten distinct motions: ten centres at radius 0, however large the vocabulary.
  std::vector<Motion> few;
  for (int i = 0; i < 1000; ++i) few.push_back({0.1 * (i % 10), 0, 0});
  const smart::KDisks f = smart::fit_kdisks(few, 64, s, 1);
  EXPECT_EQ(f.centres.size(), 10u);
  EXPECT_EQ(f.radius, 0);
}

TEST(VocabFit, ATokenIsTheNearestCentreAndTheTablesRebuildIt) {
  const smart::KDisks k = smart::fit_kdisks(clustered(5000, 5), 100, smart::kHeadingScale[1], 2);
  smart::MotionVocab vocab(128);
  vocab.set_centres(1, k.centres, k.radius);
  EXPECT_TRUE(vocab.fitted());
  EXPECT_EQ(vocab.centres(0), 0);
  smart::MotionVocab rebuilt(128);
  rebuilt.set_fit_table(vocab.table(), vocab.fit_table());
  EXPECT_EQ(rebuilt.table(), vocab.table());
  EXPECT_EQ(rebuilt.fit_table(), vocab.fit_table());
  const std::vector<Motion> queries = clustered(3000, 9);  // inside, between and far outside the centres
  for (const Motion& q : queries) {
    int best = 0;
    for (int c = 1; c < vocab.centres(1); ++c)
      if (d2(q, k.centres[static_cast<std::size_t>(c)], smart::kHeadingScale[1]) <
          d2(q, k.centres[static_cast<std::size_t>(best)], smart::kHeadingScale[1]))
        best = c;
    // The motion from the origin facing +x to (dx, dy, dh) is (dx, dy, dh) itself.
    const int tok = vocab.tokenize(1, 0, 0, 0, q.dx, q.dy, q.dh);
    ASSERT_EQ(tok, best) << q.dx << " " << q.dy << " " << q.dh;
    ASSERT_EQ(rebuilt.tokenize(1, 0, 0, 0, q.dx, q.dy, q.dh), tok);
  }
  // Ids past the centres decode to the last; the other types keep their grid.
  EXPECT_EQ(vocab.decode(1, 127).dx, k.centres.back().dx);
  const smart::MotionVocab grid(128);
  EXPECT_EQ(vocab.tokenize(0, 0, 0, 0, 3, 0.1, 0.05), grid.tokenize(0, 0, 0, 0, 3, 0.1, 0.05));
  std::vector<double> bad = vocab.fit_table();
  bad[2] = 500;  // more centres than tokens
  EXPECT_THROW(rebuilt.set_fit_table(vocab.table(), bad), Error);
}

TEST(VocabFit, MaskedStepsGiveNoMotions) {
  const Comm comm;
  const std::string file = test::smart_scenes_file(comm, "vocab_fit_masked", 12, 0.5);
  const deck::Deck deck = test::make_deck(std::string(test::kSmartTiny) + "data_file " + file + "\n",
                                          {test::kSmartMaskedFields});
  const auto data = open_data_source(deck, file, "data_file");
  const smart::TokenGrid grid;
  const auto motions = smart::sample_motions(*data, grid, 4, 1 << 20, 1 << 20);
  // The fully valid windows, counted from the file itself.
  const h5::File f = h5::File::open_read(file);
  const std::vector<std::int32_t> valid = h5::read_all<std::int32_t>(f, "agent_valid");
  const std::vector<long long> type = h5::read_all<long long>(f, "agent_type");
  const std::size_t steps = valid.size() / type.size();
  std::size_t expected[3] = {0, 0, 0}, all[3] = {0, 0, 0};
  for (std::size_t a = 0; a < type.size(); ++a)
    for (int k = 0; k < grid.tokens; ++k) {
      bool ok = true;
      for (int s = k * grid.shift; s <= (k + 1) * grid.shift; ++s) ok = ok && valid[a * steps + s] != 0;
      expected[type[a]] += ok, ++all[type[a]];
    }
  for (int t = 0; t < 3; ++t) EXPECT_EQ(motions[static_cast<std::size_t>(t)].size(), expected[t]) << t;
  EXPECT_LT(expected[0], all[0]);  // the mask removed some
  // Masked steps hold zeros: a motion across one would jump to the origin.
  for (const auto& per_type : motions)
    for (const Motion& m : per_type) ASSERT_LT(std::hypot(m.dx, m.dy), 10.0);
  // A sample of fewer scenes and motions is a subset drawn the same way every time.
  const auto small = smart::sample_motions(*data, grid, 4, 6, 50);
  EXPECT_EQ(small[0].size(), 50u);
  const auto again = smart::sample_motions(*data, grid, 4, 6, 50);
  for (std::size_t i = 0; i < small[0].size(); ++i) EXPECT_EQ(small[0][i].dx, again[0][i].dx);
}

// Note [tokens a type can learn]: a type gets at most its motions / kMotionsPerToken centres, and the
// ids past them are masked (tokens()); too few motions for kMinTokens such tokens: the grid.
TEST(VocabFit, ATypeGetsNoMoreTokensThanItsMotionsTeach) {
  const Comm comm;
  const std::string file = test::smart_scenes_file(comm, "vocab_fit_cap", 40);
  const deck::Deck deck = test::make_deck(std::string(test::kSmartTiny) + "data_file " + file + "\n", {});
  const auto data = open_data_source(deck, file, "data_file");
  const smart::TokenGrid grid;
  std::array<std::size_t, smart::kAgentTypes> seen{};
  const auto all = smart::sample_motions(*data, grid, 4, 1 << 20, 1 << 20, &seen);
  smart::MotionVocab vocab(64);
  smart::fit_vocab(vocab, *data, grid, 4);
  int capped = 0, on_grid = 0;
  for (int t = 0; t < smart::kAgentTypes; ++t) {
    const std::size_t n = seen[static_cast<std::size_t>(t)];
    EXPECT_EQ(n, all[static_cast<std::size_t>(t)].size()) << t;  // every motion sampled: the counts agree
    if (n < smart::kMotionsPerToken * smart::kMinTokens) {
      EXPECT_EQ(vocab.centres(t), 0) << t;
      EXPECT_EQ(vocab.tokens(t), 64) << t;
      ++on_grid;
    } else {
      EXPECT_GT(vocab.centres(t), 0) << t;
      EXPECT_LE(static_cast<std::size_t>(vocab.centres(t)), n / smart::kMotionsPerToken) << t;
      EXPECT_EQ(vocab.tokens(t), vocab.centres(t)) << t;
      capped += vocab.centres(t) < 64;
    }
  }
  EXPECT_GT(capped, 0);  // the vehicles: enough motions for some tokens, not for 64
  EXPECT_GT(on_grid, 0);
}

TEST(VocabFit, WalkersReconstructFarBetterThanOnTheGrid) {
  const auto train = walkers(1000, 1), held_out = walkers(200, 2);
  std::vector<Motion> m;
  for (const auto& p : train)
    for (std::size_t k = 5; k < p.size(); k += 5)
      m.push_back(smart::motion_between(p[k - 5][0], p[k - 5][1], p[k - 5][2], p[k][0], p[k][1], p[k][2]));
  const smart::MotionVocab grid(512);
  smart::MotionVocab fitted(512);
  const smart::KDisks k = smart::fit_kdisks(m, 512, smart::kHeadingScale[1], 3);
  fitted.set_centres(1, k.centres, k.radius);
  const double e_grid = reconstruction_error(grid, held_out), e_fit = reconstruction_error(fitted, held_out);
  std::printf("walkers' mean reconstruction error: grid %.4f m, fitted %.4f m (radius %.4f, %zu centres)\n", e_grid,
              e_fit, k.radius, k.centres.size());
  EXPECT_LT(e_fit, 0.5 * e_grid);
  // What a token costs (printed, not tested): the grid's cell against the nearest of 512 centres.
  for (const smart::MotionVocab* v : {&grid, static_cast<const smart::MotionVocab*>(&fitted)}) {
    const auto t0 = std::chrono::steady_clock::now();
    int sum = 0;
    for (int r = 0; r < 20; ++r) sum += static_cast<int>(reconstruction_error(*v, held_out) > 0);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %.0f ns per token (%d)\n", v == &grid ? "grid" : "fitted", s / (20.0 * 200 * 18) * 1e9, sum);
  }
}
