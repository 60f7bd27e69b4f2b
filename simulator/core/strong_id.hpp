#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace weft {

// A 32-bit index into one of the engine's arrays, typed by a tag so that an op id can never be
// passed where a tensor id is expected. The all-ones value means "none".
template <class Tag>
class StrongId {
 public:
  using value_type = std::uint32_t;
  static constexpr value_type kNoneValue = std::numeric_limits<value_type>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(value_type value) : value_(value) {}

  static constexpr StrongId none() { return StrongId(); }
  // The id at index `i` of its array (an index the array is known to hold).
  static constexpr StrongId at(std::size_t i) { return StrongId(static_cast<value_type>(i)); }
  constexpr bool valid() const { return value_ != kNoneValue; }
  constexpr value_type value() const { return value_; }

  friend constexpr auto operator<=>(StrongId, StrongId) = default;

 private:
  value_type value_ = kNoneValue;
};

}  // namespace weft

template <class Tag>
struct std::hash<weft::StrongId<Tag>> {
  std::size_t operator()(weft::StrongId<Tag> id) const noexcept { return std::hash<std::uint32_t>{}(id.value()); }
};
