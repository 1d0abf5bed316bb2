// A motion vocabulary fitted to the training data (motion_vocab_fit kdisks, SMART's k-disks): the
// training scenes' 0.5 s motions per agent type, sampled the same way at any rank count, and the
// greedy disk cover that picks a type's token centres from them (Note [fitted vocabulary]).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/smart/motion_tokens.hpp"

namespace hpct {
class Dataset;
}

namespace hpct::smart {

struct KDisks {
  std::vector<Motion> centres;
  double radius = 0;  // of every disk; the disks that cover kDiskCover of the motions are the first
};

constexpr double kDiskCover = 0.99;          // the share of motions the radius is chosen to cover
constexpr std::uint64_t kFitScenes = 4096;   // the most training scenes read for the fit
constexpr std::size_t kFitMotions = 100000;  // the most motions per type the fit uses
// A type's centres: at most its motions / kMotionsPerToken (Note [tokens a type can learn]); fewer
// motions than kMinTokens such tokens need: the type keeps its grid.
constexpr std::size_t kMotionsPerToken = 400;
constexpr int kMinTokens = 8;

// K-disks over `motions` (distance of MotionIndex with heading scale `scale`): at most `vocab`
// centres, each a motion, picked in an order drawn from `seed`.
KDisks fit_kdisks(const std::vector<Motion>& motions, int vocab, double scale, std::uint64_t seed);

// Up to `per_type` valid motions per agent type from up to `scenes` rows of a data set of scenes
// (agent_state, agent_type and, when present, agent_valid), on `grid`'s tokens: a uniform sample
// drawn from `seed`, in an order that depends on the data alone. `seen`: every type's valid motions in
// those scenes.
std::array<std::vector<Motion>, kAgentTypes> sample_motions(const Dataset& data, const TokenGrid& grid,
                                                            std::uint64_t seed, std::uint64_t scenes = kFitScenes,
                                                            std::size_t per_type = kFitMotions,
                                                            std::array<std::size_t, kAgentTypes>* seen = nullptr);

// Per agent type, the mean distance and heading difference between the truth and the drift-free token chain (Note
// [drift-free tokens] in scene_graph.cpp) through `vocab` at every valid token point of up to
// `scenes` rows (drawn from `seed` as sample_motions draws them): what tokenising costs before any
// learning.
struct TokenError {
  double position = 0, heading = 0;  // m, rad
};
std::array<TokenError, kAgentTypes> token_error(const MotionVocab& vocab, const Dataset& data,
                                                const TokenGrid& grid, std::uint64_t seed,
                                                std::uint64_t scenes = kFitScenes);

// Fits `vocab`'s types to a data set (at most motions / kMotionsPerToken centres each; types with
// fewer than kMinTokens kMotionsPerToken motions keep their grid).
void fit_vocab(MotionVocab& vocab, const Dataset& data, const TokenGrid& grid, std::uint64_t seed);

}  // namespace hpct::smart
