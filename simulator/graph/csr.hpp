#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace weft {

// Compressed sparse rows: for each key (a dense StrongId), a contiguous run of values.
template <class Key, class Value>
class Csr {
 public:
  Csr() = default;

  // Groups (key, value) pairs by key, keeping the pairs' order within a key (a stable counting
  // sort). `pairs` is consumed so that its memory is released before the result grows.
  static Csr from_pairs(std::size_t key_count, std::vector<std::pair<Key, Value>>&& pairs) {
    std::vector<std::uint8_t> none;
    return from_pairs(key_count, std::move(pairs), none, none);
  }

  // The same, also arranging `extra` (one entry per pair, or empty) into `arranged_extra`, parallel
  // to the values.
  template <class Extra>
  static Csr from_pairs(std::size_t key_count, std::vector<std::pair<Key, Value>>&& pairs,
                        const std::vector<Extra>& extra, std::vector<Extra>& arranged_extra) {
    if (pairs.size() >= UINT32_MAX) throw std::length_error("more than 2^32 edges of one kind");
    Csr csr;
    csr.offsets_.assign(key_count + 1, 0);
    for (const auto& pair : pairs) ++csr.offsets_[pair.first.value() + 1];
    for (std::size_t i = 0; i < key_count; ++i) csr.offsets_[i + 1] += csr.offsets_[i];
    csr.values_.resize(pairs.size());
    if (!extra.empty()) arranged_extra.resize(pairs.size());
    std::vector<std::uint32_t> cursor(csr.offsets_.begin(), csr.offsets_.end() - 1);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::uint32_t at = cursor[pairs[i].first.value()]++;
      csr.values_[at] = pairs[i].second;
      if (!extra.empty()) arranged_extra[at] = extra[i];
    }
    std::vector<std::pair<Key, Value>>().swap(pairs);
    return csr;
  }

  std::span<const Value> operator[](Key key) const {
    const std::uint32_t begin = offsets_[key.value()];
    return {values_.data() + begin, offsets_[key.value() + 1] - begin};
  }

  std::size_t key_count() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  // Index of the key's first value among all values (for arrays kept parallel to the values).
  std::size_t offset(Key key) const { return offsets_[key.value()]; }
  std::size_t value_count() const { return values_.size(); }
  std::size_t memory_bytes() const {
    return offsets_.capacity() * sizeof(std::uint32_t) + values_.capacity() * sizeof(Value);
  }

 private:
  std::vector<std::uint32_t> offsets_;
  std::vector<Value> values_;
};

}  // namespace weft
