// Counter-based random numbers: every draw is a pure function of (seed, stream, counter...), so
// sample order, noise and initial weights never depend on the rank count or thread schedule.
// The mixer is SplitMix64's finaliser (Steele, Lea & Flood 2014), chained over the counters.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include "core/kokkos_compat.hpp"

namespace hpct::rng {

KOKKOS_INLINE_FUNCTION std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

KOKKOS_INLINE_FUNCTION std::uint64_t hash(std::uint64_t seed, std::uint64_t a) { return mix(mix(seed) ^ a); }
KOKKOS_INLINE_FUNCTION std::uint64_t hash(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  return mix(hash(seed, a) ^ b);
}
KOKKOS_INLINE_FUNCTION std::uint64_t hash(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return mix(hash(seed, a, b) ^ c);
}

// Uniform in [0, 1) with 53 random bits.
KOKKOS_INLINE_FUNCTION double uniform(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Standard normal by Box-Muller from one 64-bit key (two derived uniforms).
KOKKOS_INLINE_FUNCTION double normal(std::uint64_t key) {
  const double u1 = 1.0 - uniform(mix(key ^ 0x5851f42d4c957f2dull));  // in (0, 1]
  const double u2 = uniform(mix(key ^ 0x14057b7ef767814full));
  return kmath::sqrt(-2.0 * kmath::log(u1)) * kmath::cos(6.283185307179586 * u2);
}

// Streams: distinct purposes never share draws.
enum Stream : std::uint64_t {
  kInitStream = 1,
  kShuffleStream = 2,
  kSplitStream = 3,
  kNoiseStream = 4,
  kTimestepStream = 5,
  kDataGenStream = 6,
  kDropoutStream = 7,
  kAugmentStream = 8,  // image augmentation (data/image_transform.hpp)
};

}  // namespace hpct::rng
