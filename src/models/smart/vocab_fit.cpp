// SMART's k-disks motion vocabulary fitted to the training scenes (see vocab_fit.hpp).
#include "models/smart/vocab_fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"
#include "data/dataset.hpp"

namespace hpct::smart {

// Note [fitted vocabulary]: the grid of motion_tokens.hpp spends most of its tokens on motions
// nobody makes and is coarse where agents are (a walker's steady straight pace); its ranges are
// trajgen's. `motion_vocab_fit kdisks` fits each type's tokens to the training part, as SMART does:
//   motions  every valid 0.5 s motion (the window's steps all valid, Note [validity masks]) from
//            the true pose at token point k to the true pose at k + 1, in the frame at k: the
//            drift-free tokens' motion (Note [drift-free tokens]) when the chain is exact; a uniform
//            sample of at most kFitMotions per type (the smallest hash of (seed, scene, agent,
//            token)) from at most kFitScenes scenes (the smallest hash of (seed, scene)). Every
//            rank reads the same scenes and keeps the same motions, so every rank and every rank
//            count fits the same vocabulary, with no communication.
//   distance SMART compares the corners of the agent's box moved by two motions; to first order in
//            the heading change that is the Euclidean distance of (dx, dy, s dh), s = kHeadingScale
//            of the type (about its box's half-diagonal), which a bucket grid searches fast
//            (MotionIndex).
//   k-disks  visit the motions in an order drawn from the seed; a motion no disk covers yet becomes
//            a centre, and its disk of radius r covers every motion within r. The radius is the
//            smallest (bisection) whose disks cover kDiskCover of the motions with at most
//            motion_vocab centres; the remaining tokens then go on to the motions still uncovered
//            (the tails: fast vehicles, a walker turning round), until motion_vocab centres or none
//            is left. Every centre is a motion that occurs, and 99% of the sample lies within r of
//            one: the tokens cover where motions occur and none is spent where none does.
//   tokens   a motion's token is its nearest centre (the lowest id among equals): bucket search,
//            exact. A type gets at most its motions / kMotionsPerToken centres (Note [tokens a type
//            can learn]); a type whose motions all fit fewer disks has fewer. The ids past a
//            type's centres are masked (Note [tokens per type] in smart_forward.cpp).
// The centres and radii are stored with the weights (smart/motion_vocab, smart/motion_vocab_fit)
// and read back by every tool that loads them; a resumed run fits the same vocabulary again.

// Note [tokens a type can learn]: a token is a class the model learns from the type's motions, and
// k-disks spends every token it is given: a type with few motions for its tokens spreads them thin.
// trajgen's cyclists, 12 834 motions in 128 tokens, put 90% of them in 61 tokens (about 190 each;
// the pedestrians' 18 522 fill 35, the vehicles' 69 786 fill 53): the model learns the cyclists'
// classes badly and their rollouts wander (minADE 5.2 m, the grid's 2.8-3.1 m) although their tokens
// reconstruct the paths better than the grid's (0.056 m against 0.087 m at 512 cells). So a type
// gets at most its motions (in the scenes read) / kMotionsPerToken centres, its other ids masked;
// at 32 tokens the cyclists reach 2.1-3.4 m in three runs, at 16 tokens 2.1 m (docs/smart-results.md).
// With fewer motions than kMinTokens such tokens the type keeps its grid.
KDisks fit_kdisks(const std::vector<Motion>& motions, int vocab, double scale, std::uint64_t seed) {
  KDisks out;
  const std::size_t n = motions.size();
  if (n == 0 || vocab <= 0) return out;
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  for (std::size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng::hash(seed, i) % (i + 1)]);
  const auto need = static_cast<std::size_t>(std::ceil(kDiskCover * static_cast<double>(n)));
  std::vector<char> alive(n);
  // The disks of radius r in `order`: true when they cover `need` motions with at most vocab
  // centres (fill: go on over the rest until vocab centres); the centres into `centres`.
  auto cover = [&](double r, bool fill, std::vector<Motion>* centres) {
    const MotionIndex index(motions, scale, r);
    std::fill(alive.begin(), alive.end(), 1);
    std::size_t covered = 0;
    int picks = 0;
    for (const std::uint32_t i : order) {
      if (!alive[i]) continue;
      if ((!fill && covered >= need) || picks == vocab) break;
      ++picks;
      if (centres) centres->push_back(motions[i]);
      index.within(motions[i], r, [&](int j) {
        if (alive[static_cast<std::size_t>(j)]) alive[static_cast<std::size_t>(j)] = 0, ++covered;
      });
    }
    return covered >= need;
  };
  double lo = 0, hi = 0;  // hi: a radius that covers (the bounding box's diagonal: one disk covers all)
  {
    Motion a = motions[0], b = motions[0];
    for (const Motion& m : motions)
      a = {std::min(a.dx, m.dx), std::min(a.dy, m.dy), std::min(a.dh, m.dh)},
      b = {std::max(b.dx, m.dx), std::max(b.dy, m.dy), std::max(b.dh, m.dh)};
    hi = std::hypot(b.dx - a.dx, b.dy - a.dy, scale * (b.dh - a.dh)) * (1 + 1e-9);
  }
  if (cover(0, false, nullptr)) hi = 0;
  for (int it = 0; it < 30 && hi > 0 && hi - lo > 1e-6 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (cover(mid, false, nullptr) ? hi : lo) = mid;
  }
  out.radius = hi;
  cover(hi, true, &out.centres);
  return out;
}

namespace {

int field_index(const std::vector<FieldSpec>& specs, const char* name) {
  for (std::size_t f = 0; f < specs.size(); ++f)
    if (specs[f].name == name) return static_cast<int>(f);
  return -1;
}

// A type's sample: the `cap` motions of smallest key, as a max-heap on the key.
struct Sample {
  std::vector<std::pair<std::uint64_t, Motion>> heap;
  void add(std::uint64_t key, const Motion& m, std::size_t cap) {
    auto less = [](const auto& a, const auto& b) { return a.first < b.first; };
    if (heap.size() < cap) {
      heap.emplace_back(key, m), std::push_heap(heap.begin(), heap.end(), less);
    } else if (cap > 0 && key < heap.front().first) {
      std::pop_heap(heap.begin(), heap.end(), less), heap.back() = {key, m};
      std::push_heap(heap.begin(), heap.end(), less);
    }
  }
};

// Calls f(row, agent, type, state, ok) for every agent of up to `scenes` rows of a data set of scenes
// (the smallest hashes of (seed, row)), in row order: state its [steps, 5] rows, ok(s) whether step s
// is valid.
template <class F>
void for_each_agent(const Dataset& data, const TokenGrid& grid, std::uint64_t seed, std::uint64_t scenes, F&& f) {
  const std::vector<FieldSpec> specs = data.fields();
  const int fs = field_index(specs, "agent_state"), ft = field_index(specs, "agent_type"),
            fv = field_index(specs, "agent_valid");
  if (fs < 0 || ft < 0)
    throw Error(data.description() + ": motion_vocab_fit reads agent_state and agent_type", ExitCode::bad_input);
  const FieldSpec &st = specs[static_cast<std::size_t>(fs)], &ty = specs[static_cast<std::size_t>(ft)];
  const auto steps = static_cast<std::size_t>(st.row_shape.dim[0]);
  if (!st.ragged || st.dtype != DType::f32 || st.row_shape.rank != 2 || st.row_shape.dim[1] != 5 ||
      steps < static_cast<std::size_t>(grid.steps()) || !ty.ragged || ty.dtype != DType::i64)
    throw Error(data.description() + ": motion_vocab_fit reads ragged agent_state [agents, steps >= " +
                    std::to_string(grid.steps()) + ", 5] and int64 agent_type",
                ExitCode::bad_input);
  const bool wide_valid = fv >= 0 && specs[static_cast<std::size_t>(fv)].dtype == DType::i64;
  // The scenes: the smallest hashes of their indices (all of them when there are few).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keyed(data.rows());
  for (std::uint64_t r = 0; r < data.rows(); ++r) keyed[r] = {rng::hash(seed, 1, r), r};
  const std::uint64_t take = std::min<std::uint64_t>(scenes, keyed.size());
  std::nth_element(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(take), keyed.end());
  std::vector<std::uint64_t> rows(take);
  for (std::uint64_t i = 0; i < take; ++i) rows[i] = keyed[i].second;
  std::sort(rows.begin(), rows.end());
  const std::uint64_t chunk = 64;
  std::vector<std::uint64_t> elements(specs.size(), 0);
  for (std::size_t f = 0; f < specs.size(); ++f)
    if (specs[f].ragged) elements[f] = most_elements(data, static_cast<int>(f), chunk);
  const HostFields buf(specs, chunk, elements);
  for (std::uint64_t first = 0; first < take; first += chunk) {
    const std::vector<std::uint64_t> part(rows.begin() + static_cast<std::ptrdiff_t>(first),
                                          rows.begin() +
                                              static_cast<std::ptrdiff_t>(std::min(take, first + chunk)));
    data.read_rows(part, buf.buffers());  // bad values: the training reads report them
    const std::uint64_t* o = buf.offsets(static_cast<std::size_t>(fs));
    const auto* state = reinterpret_cast<const float*>(buf.words(static_cast<std::size_t>(fs)));
    const auto* type = reinterpret_cast<const std::int64_t*>(buf.words(static_cast<std::size_t>(ft)));
    const std::uint32_t* valid = fv >= 0 ? buf.words(static_cast<std::size_t>(fv)) : nullptr;
    for (std::size_t i = 0; i < part.size(); ++i)
      for (std::uint64_t a = o[i]; a < o[i + 1]; ++a) {
        auto ok = [&](int s) {
          if (!valid) return true;
          const std::size_t at = a * steps + static_cast<std::size_t>(s);
          return wide_valid ? reinterpret_cast<const std::int64_t*>(valid)[at] != 0
                            : reinterpret_cast<const std::int32_t*>(valid)[at] != 0;
        };
        const auto t = static_cast<int>(std::clamp<std::int64_t>(type[a], 0, kAgentTypes - 1));
        f(part[i], a - o[i], t, state + a * steps * 5, ok);
      }
  }
}

// Whether token k's window (steps k S .. (k + 1) S) is valid.
template <class Ok>
bool window_ok(const Ok& ok, int k, int S) {
  for (int s = k * S; s <= (k + 1) * S; ++s)
    if (!ok(s)) return false;
  return true;
}

}  // namespace

std::array<std::vector<Motion>, kAgentTypes> sample_motions(const Dataset& data, const TokenGrid& grid,
                                                            std::uint64_t seed, std::uint64_t scenes,
                                                            std::size_t per_type,
                                                            std::array<std::size_t, kAgentTypes>* seen) {
  std::array<Sample, kAgentTypes> sample;
  std::array<std::size_t, kAgentTypes> all{};
  const int S = grid.shift;
  for_each_agent(data, grid, seed, scenes,
                 [&](std::uint64_t row, std::uint64_t agent, int t, const float* p, const auto& ok) {
                   for (int k = 0; k < grid.tokens; ++k) {
                     if (!window_ok(ok, k, S)) continue;
                     const float *p0 = p + k * S * 5, *p1 = p + (k + 1) * S * 5;
                     const Motion m = motion_between(p0[0], p0[1], p0[2], p1[0], p1[1], p1[2]);
                     if (!std::isfinite(m.dx) || !std::isfinite(m.dy) || !std::isfinite(m.dh)) continue;
                     ++all[static_cast<std::size_t>(t)];
                     sample[static_cast<std::size_t>(t)].add(rng::hash(seed, row, agent,
                                                                       static_cast<std::uint64_t>(k)),
                                                             m, per_type);
                   }
                 });
  std::array<std::vector<Motion>, kAgentTypes> out;
  for (std::size_t t = 0; t < out.size(); ++t) {
    std::sort(sample[t].heap.begin(), sample[t].heap.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& km : sample[t].heap) out[t].push_back(km.second);
  }
  if (seen) *seen = all;
  return out;
}

std::array<TokenError, kAgentTypes> token_error(const MotionVocab& vocab, const Dataset& data,
                                                const TokenGrid& grid, std::uint64_t seed, std::uint64_t scenes) {
  std::array<TokenError, kAgentTypes> sum{};
  std::array<double, kAgentTypes> n{};
  const int S = grid.shift;
  for_each_agent(data, grid, seed, scenes,
                 [&](std::uint64_t, std::uint64_t, int t, const float* p, const auto& ok) {
                   double x = 0, y = 0, h = 0;
                   bool known = false;  // as the graph's chain: restarts from the truth after a gap
                   for (int k = 0; k < grid.tokens; ++k) {
                     if (!window_ok(ok, k, S)) {
                       known = false;
                       continue;
                     }
                     if (!known) x = p[k * S * 5], y = p[k * S * 5 + 1], h = p[k * S * 5 + 2], known = true;
                     const float* q = p + (k + 1) * S * 5;
                     const int tok = vocab.tokenize(t, x, y, h, q[0], q[1], q[2]);
                     vocab.apply(t, tok, x, y, h);
                     const double e = std::hypot(x - q[0], y - q[1]), eh = std::abs(wrap_angle(h - q[2]));
                     if (!std::isfinite(e) || !std::isfinite(eh)) continue;
                     TokenError& s = sum[static_cast<std::size_t>(t)];
                     s.position += e, s.heading += eh, ++n[static_cast<std::size_t>(t)];
                   }
                 });
  for (std::size_t t = 0; t < sum.size(); ++t)
    if (n[t] > 0) sum[t].position /= n[t], sum[t].heading /= n[t];
  return sum;
}

void fit_vocab(MotionVocab& vocab, const Dataset& data, const TokenGrid& grid, std::uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t sample_seed = rng::hash(seed, 0x766f636162ull);
  std::array<std::size_t, kAgentTypes> seen{};
  const auto motions = sample_motions(data, grid, sample_seed, kFitScenes, kFitMotions, &seen);
  for (int t = 0; t < kAgentTypes; ++t) {
    const std::vector<Motion>& m = motions[static_cast<std::size_t>(t)];
    const std::size_t all = seen[static_cast<std::size_t>(t)];
    if (all < kMotionsPerToken * static_cast<std::size_t>(kMinTokens)) {
      vocab.set_centres(t, {}, 0);
      Log::info(strf("  motion_vocab_fit: %s: %zu motions, fewer than %zu for %d tokens: the grid",
                     kAgentTypeNames[t], all, kMotionsPerToken * kMinTokens, kMinTokens));
      continue;
    }
    // Note [tokens a type can learn]: no more tokens than the type's motions teach.
    const int tokens = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(vocab.count(t)),
                                                              all / kMotionsPerToken));
    const KDisks k = fit_kdisks(m, tokens, kHeadingScale[t],
                                rng::hash(seed, 0x766f636162ull, static_cast<std::uint64_t>(t)));
    vocab.set_centres(t, k.centres, k.radius);
    Log::info(strf("  motion_vocab_fit: %s: %zu motions (%zu fitted), %zu centres of %d, radius %.4f m",
                   kAgentTypeNames[t], all, m.size(), k.centres.size(), vocab.count(t), k.radius));
  }
  const auto fitted = token_error(vocab, data, grid, sample_seed),
             on_grid = token_error(MotionVocab(vocab.size(), vocab.counts()), data, grid, sample_seed);
  for (int t = 0; t < kAgentTypes; ++t)
    Log::info(
        strf("  motion_vocab_fit: %s: the tokens reconstruct the paths to %.4f m, %.4f rad (the grid: %.4f "
             "m, %.4f rad)",
             kAgentTypeNames[t], fitted[static_cast<std::size_t>(t)].position,
             fitted[static_cast<std::size_t>(t)].heading, on_grid[static_cast<std::size_t>(t)].position,
             on_grid[static_cast<std::size_t>(t)].heading));
  Log::info(strf("  motion_vocab_fit: %.2f s",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
}

}  // namespace hpct::smart
