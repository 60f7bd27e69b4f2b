#pragma once

#include <cstdint>

namespace weft {

// SplitMix64's golden-ratio increment and its finalizer, which scrambles every bit of `z`.
inline constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t splitmix64_finalize(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Folds `value` into a running 64-bit hash: boost::hash_combine's step followed by splitmix64's
// finalizer, so that structural hashes of millions of values stay well spread.
constexpr std::uint64_t hash_mix(std::uint64_t seed, std::uint64_t value) {
  return splitmix64_finalize(seed ^ (value + kGoldenGamma + (seed << 6) + (seed >> 2)));
}

}  // namespace weft
