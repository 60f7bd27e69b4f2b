#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace weft {

// A monotone priority queue of (key, value) with unsigned 64-bit keys: every pushed key must be at
// least the key of the last pop, which holds for event times in a discrete-event simulation
// (nothing is scheduled in the past). There is deliberately no peek: finding the minimum moves
// the base up to it, after which an event at the current time could no longer be pushed. Pushes
// and pops cost amortized O(log of the key range) with few unpredictable branches, faster than a
// binary heap. Entries with equal keys pop in an order fixed by the sequence of operations, so
// runs are reproducible; callers must not rely on any other order among equal keys.
template <class Value>
class RadixHeap {
 public:
  struct Entry {
    std::uint64_t key;
    Value value;
  };

  bool empty() const { return size_ == 0; }

  [[gnu::always_inline]] void push(std::uint64_t key, Value value) {
    place(key, value);
    ++size_;
  }

  // Removes an entry with the smallest key. Requires !empty().
  Entry pop() {
    settle();
    const Entry entry = buckets_[0].back();
    buckets_[0].pop_back();
    --size_;
    return entry;
  }

  // Removes an entry whose key is `key` if the last pop had that key and such an entry remains.
  bool pop_if_key(std::uint64_t key, Value& value) {
    if (last_ != key || buckets_[0].empty()) return false;
    value = buckets_[0].back().value;
    buckets_[0].pop_back();
    --size_;
    return true;
  }

 private:
  std::size_t bucket_of(std::uint64_t key) const {
    return key == last_ ? 0 : static_cast<std::size_t>(64 - std::countl_zero(key ^ last_));
  }

  // By its fields, not a reference to an entry just built: loading that whole from the two
  // stores that wrote it would stall.
  void place(std::uint64_t key, Value value) {
    const std::size_t bucket = bucket_of(key);
    buckets_[bucket].push_back({key, value});
    if (bucket > 0) occupied_ |= std::uint64_t{1} << (bucket - 1);
  }

  // Makes bucket 0 non-empty: finds the lowest non-empty bucket, takes its smallest key as the
  // new base, and spreads its entries into lower buckets.
  void settle() {
    if (!buckets_[0].empty()) return;
    const std::size_t index = 1 + static_cast<std::size_t>(std::countr_zero(occupied_));
    std::vector<Entry>& source = buckets_[index];
    occupied_ &= ~(std::uint64_t{1} << (index - 1));
    std::uint64_t smallest = source.front().key;
    for (const Entry& entry : source) smallest = entry.key < smallest ? entry.key : smallest;
    last_ = smallest;
    for (const Entry& entry : source) place(entry.key, entry.value);  // every entry lands in a lower bucket
    source.clear();
  }

  std::array<std::vector<Entry>, 65> buckets_;
  std::uint64_t occupied_ = 0;  // bit b - 1 set while bucket b (1 to 64) holds entries
  std::uint64_t last_ = 0;
  std::size_t size_ = 0;
};

}  // namespace weft
