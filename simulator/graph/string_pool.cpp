#include "simulator/graph/string_pool.hpp"

#include <limits>
#include <stdexcept>

namespace weft {

NameId StringPool::intern(std::string_view text) {
  if (2 * (size() + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = hash(text) & mask;
  while (slots_[slot].valid()) {
    if (view(slots_[slot]) == text) return slots_[slot];
    slot = (slot + 1) & mask;
  }
  if (chars_.size() + text.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("string pool exceeds 4 GiB of names");
  }
  const NameId id(static_cast<NameId::value_type>(size()));
  chars_.append(text);
  offsets_.push_back(static_cast<std::uint32_t>(chars_.size()));
  slots_[slot] = id;
  return id;
}

void StringPool::grow() {
  std::vector<NameId> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : 2 * old.size(), NameId::none());
  const std::size_t mask = slots_.size() - 1;
  for (NameId id : old) {
    if (!id.valid()) continue;
    std::size_t slot = hash(view(id)) & mask;
    while (slots_[slot].valid()) slot = (slot + 1) & mask;
    slots_[slot] = id;
  }
}

std::string_view StringPool::view(NameId id) const {
  if (!id.valid()) return {};
  const std::uint32_t begin = offsets_[id.value()];
  return std::string_view(chars_).substr(begin, offsets_[id.value() + 1] - begin);
}

void StringPool::freeze() { std::vector<NameId>().swap(slots_); }

}  // namespace weft
