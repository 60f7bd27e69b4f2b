#pragma once

#include <cstdint>

#include "simulator/core/json_cursor.hpp"

namespace weft {

// The most tokens (or anything) a sample may have.
inline constexpr std::int64_t kMaxLength = std::int64_t{1} << 40;

// A reproducible stream of uniform numbers for one sample: SplitMix64 seeded from the dataset's
// seed and the sample's index, so that a sample's draws do not depend on the order samples are
// drawn in, and the same on every platform (std:: distributions are implementation-defined).
class SampleRandom {
 public:
  SampleRandom(std::uint64_t seed, std::uint64_t sample);

  std::uint64_t next_bits();
  double uniform();  // in [0, 1)
  double standard_normal();

 private:
  std::uint64_t state_;
};

// How many of something a sample has (text tokens, ...): a fixed count, uniform integers in
// [min, max], or a log-normal with a median and a shape sigma, rounded and clipped to [min, max].
struct LengthDistribution {
  enum class Kind : std::uint8_t { fixed, uniform, lognormal };
  Kind kind = Kind::fixed;
  std::int64_t min = 1;
  std::int64_t max = 1;
  double median = 1.0;  // log-normal
  double sigma = 0.0;   // log-normal

  std::int64_t draw(SampleRandom& random) const;
  bool operator==(const LengthDistribution&) const = default;
};

// {"distribution": "fixed", "value": 512}
// {"distribution": "uniform", "min": 128, "max": 8192}
// {"distribution": "lognormal", "median": 900, "sigma": 1.1, "min": 16, "max": 32768}
// Counts are positive, or with `zero_allowed` (media a sample may lack) non-negative.
LengthDistribution load_length_distribution(const JsonCursor& json, bool zero_allowed = false);

}  // namespace weft
