#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/core/ids.hpp"

namespace weft {

// Interned names stored back to back in one buffer: equal names share one id, and millions of
// names cost a few bytes each plus their characters. The lookup table is open-addressed over
// ids, so interning allocates nothing but the characters.
class StringPool {
 public:
  NameId intern(std::string_view text);
  std::string_view view(NameId id) const;
  std::size_t size() const { return offsets_.size() - 1; }

  // Drops the lookup table; the pool stays readable but can no longer intern.
  void freeze();

 private:
  static std::size_t hash(std::string_view text) { return std::hash<std::string_view>{}(text); }
  void grow();

  std::string chars_;
  std::vector<std::uint32_t> offsets_{0};
  std::vector<NameId> slots_;  // power-of-two size; none marks an empty slot
};

}  // namespace weft
