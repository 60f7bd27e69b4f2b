#include "simulator/graph/string_pool.hpp"

#include <limits>
#include <stdexcept>

namespace weft {

NameId StringPool::intern(std::string_view text) {
  std::string key(text);
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  if (chars_.size() + text.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("string pool exceeds 4 GiB of names");
  }
  const NameId id(static_cast<NameId::value_type>(size()));
  chars_.append(text);
  offsets_.push_back(static_cast<std::uint32_t>(chars_.size()));
  index_.emplace(std::move(key), id);
  return id;
}

std::string_view StringPool::view(NameId id) const {
  if (!id.valid()) return {};
  const std::uint32_t begin = offsets_[id.value()];
  return std::string_view(chars_).substr(begin, offsets_[id.value() + 1] - begin);
}

void StringPool::freeze() {
  index_ = {};
  chars_.shrink_to_fit();
  offsets_.shrink_to_fit();
}

}  // namespace weft
