#include "simulator/workload/data/length_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "simulator/core/hash_mix.hpp"

namespace weft {
namespace {

constexpr EnumNames<LengthDistribution::Kind, 3> kKindNames({"fixed", "uniform", "lognormal"});

std::int64_t read_length(const JsonCursor& json, std::string_view key, bool zero_allowed) {
  const JsonCursor value = json.at(key);
  const std::int64_t length = zero_allowed ? value.as_nonnegative_int() : value.as_positive_int();
  if (length > kMaxLength) value.fail("expected at most " + std::to_string(kMaxLength));
  return length;
}

}  // namespace

SampleRandom::SampleRandom(std::uint64_t seed, std::uint64_t sample)
    : state_(splitmix64_finalize(seed ^ splitmix64_finalize(sample * kGoldenGamma))) {}

std::uint64_t SampleRandom::next_bits() {
  state_ += kGoldenGamma;
  return splitmix64_finalize(state_);
}

double SampleRandom::uniform() { return static_cast<double>(next_bits() >> 11) * 0x1.0p-53; }

double SampleRandom::standard_normal() {
  // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
  const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  return radius * std::cos(2.0 * std::numbers::pi * uniform());
}

std::int64_t LengthDistribution::draw(SampleRandom& random) const {
  switch (kind) {
    case Kind::fixed:
      return min;
    case Kind::uniform:
      return min + static_cast<std::int64_t>(random.uniform() * static_cast<double>(max - min + 1));
    case Kind::lognormal: {
      const double value = median * std::exp(sigma * random.standard_normal());
      return std::clamp(static_cast<std::int64_t>(std::llround(std::min(value, 1e15))), min, max);
    }
  }
  return min;
}

LengthDistribution load_length_distribution(const JsonCursor& json, bool zero_allowed) {
  LengthDistribution d;
  d.kind = json.at("distribution").as_enum(kKindNames);
  switch (d.kind) {
    case LengthDistribution::Kind::fixed:
      json.expect_only({"distribution", "value"});
      d.min = d.max = read_length(json, "value", zero_allowed);
      return d;
    case LengthDistribution::Kind::uniform:
      json.expect_only({"distribution", "min", "max"});
      d.min = read_length(json, "min", zero_allowed);
      d.max = read_length(json, "max", zero_allowed);
      break;
    case LengthDistribution::Kind::lognormal:
      json.expect_only({"distribution", "median", "sigma", "min", "max"});
      d.median = json.at("median").as_positive_number();
      d.sigma = json.at("sigma").as_nonnegative_number();
      if (d.sigma > 10.0) json.at("sigma").fail("expected at most 10");
      d.min = json.find("min") ? read_length(json, "min", zero_allowed) : 1;
      d.max = json.find("max") ? read_length(json, "max", zero_allowed) : kMaxLength;
      break;
  }
  if (d.max < d.min) json.at("max").fail("expected at least min = " + std::to_string(d.min));
  return d;
}

}  // namespace weft
