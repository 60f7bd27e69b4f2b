#include "simulator/core/op_work.hpp"

#include <bit>

#include "simulator/core/hash_mix.hpp"

namespace weft {

std::size_t OpWorkHash::operator()(const OpWork& work) const noexcept {
  std::size_t seed = static_cast<std::size_t>(work.op_class) * 31 + static_cast<std::size_t>(work.dtype);
  seed = hash_mix(seed, static_cast<std::uint64_t>(work.kernel));
  seed = hash_mix(seed, std::bit_cast<std::uint64_t>(work.flops));
  seed = hash_mix(seed, static_cast<std::uint64_t>(work.memory_bytes));
  seed = hash_mix(seed, static_cast<std::uint64_t>(work.network_bytes));
  seed = hash_mix(seed, work.comm_group);
  seed = hash_mix(seed, std::bit_cast<std::uint64_t>(work.reserved_sms));
  for (std::int64_t dim : work.shape) seed = hash_mix(seed, static_cast<std::uint64_t>(dim));
  return seed;
}

}  // namespace weft
