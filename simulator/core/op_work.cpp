#include "simulator/core/op_work.hpp"

#include <bit>

namespace weft {
namespace {

std::size_t mix(std::size_t seed, std::uint64_t value) {
  // boost::hash_combine's mixing step, widened to 64 bits.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

}  // namespace

std::size_t OpWorkHash::operator()(const OpWork& work) const noexcept {
  std::size_t seed = static_cast<std::size_t>(work.op_class) * 31 + static_cast<std::size_t>(work.dtype);
  seed = mix(seed, std::bit_cast<std::uint64_t>(work.flops));
  seed = mix(seed, static_cast<std::uint64_t>(work.memory_bytes));
  seed = mix(seed, static_cast<std::uint64_t>(work.network_bytes));
  seed = mix(seed, work.comm_group);
  for (std::int64_t dim : work.shape) seed = mix(seed, static_cast<std::uint64_t>(dim));
  return seed;
}

}  // namespace weft
