#include "simulator/workload/context_parallel/bitfield_mask.hpp"

#include <string>

#include "simulator/core/input_error.hpp"

namespace weft {

bool BitfieldMask::attends(std::int64_t q, std::int64_t k) const {
  const auto qi = static_cast<std::size_t>(q);
  const auto ki = static_cast<std::size_t>(k);
  if (documents[qi] != documents[ki]) return false;
  const std::uint64_t query = words[qi];
  const std::uint64_t key = words[ki];
  if ((query & kCausalBit) != 0) return k <= q && (query & key & kAllModalities) != 0;
  return (query & kAllModalities) != 0 && query == key;
}

void BitfieldMaskBuilder::append(std::int64_t tokens, std::uint64_t word) {
  if (tokens <= 0) return;
  mask_.words.insert(mask_.words.end(), static_cast<std::size_t>(tokens), word);
  mask_.documents.insert(mask_.documents.end(), static_cast<std::size_t>(tokens), document_);
}

void BitfieldMaskBuilder::causal(std::int64_t tokens) {
  append(tokens, BitfieldMask::kCausalBit | BitfieldMask::kAllModalities);
}

void BitfieldMaskBuilder::bidirectional(std::int64_t tokens) {
  if (tokens <= 0) return;
  if (next_bit_ >= BitfieldMask::kModalityBits) {
    throw InputError("a document of the attention mask has more than " +
                     std::to_string(BitfieldMask::kModalityBits - 1) +
                     " bidirectional spans, more than a bitfield attention mask's modality bits name");
  }
  append(tokens, std::uint64_t{1} << next_bit_);
  ++next_bit_;
}

void BitfieldMaskBuilder::empty(std::int64_t tokens) { append(tokens, 0); }

void BitfieldMaskBuilder::next_document() {
  ++document_;
  next_bit_ = 1;
}

}  // namespace weft
