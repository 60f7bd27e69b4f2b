#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "simulator/core/hash_mix.hpp"

namespace weft {

// A seeded stream of random numbers whose every draw is defined here (SplitMix64 and inverse
// transforms), not by a standard library's distributions: the same seed gives the same run on
// every platform.
class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed) : state_(splitmix64_finalize(seed)) {}

  // Uniform in [0, 1), 53 random bits.
  double uniform() {
    state_ += kGoldenGamma;
    return static_cast<double>(splitmix64_finalize(state_) >> 11) * 0x1.0p-53;
  }

  // Exponential with `rate` events per unit; infinite when the rate is 0.
  double exponential(double rate) {
    if (rate <= 0.0) return std::numeric_limits<double>::infinity();
    return -std::log1p(-uniform()) / rate;
  }

 private:
  std::uint64_t state_;
};

}  // namespace weft
