#pragma once

#include <cstdint>
#include <vector>

namespace weft {

// An attention mask as Cornstarch's Bitfield Attention Mask (BAM) holds it (papers/004 §4.3.1,
// papers/002 §3.3.1): one 64-bit word per token instead of a T x T matrix. Bits 0..61 name the
// modality outputs a token belongs to or attends (bit 0: text); bit 63 is the causal control bit.
// A causal token attends every earlier token (itself included) that shares one of its bits; a
// token without it attends the tokens whose word equals its own, before or after it (an encoder's
// output attends itself bidirectionally). A word of no modality bit attends nothing (padding).
// A document index per token keeps the sequences of a packed sequence apart, as a packed batch's
// sequence boundaries do: BAM's bits alone cannot tell two packed texts apart.
struct BitfieldMask {
  static constexpr int kModalityBits = 62;
  static constexpr std::uint64_t kCausalBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kAllModalities = (std::uint64_t{1} << kModalityBits) - 1;

  std::vector<std::uint64_t> words;
  std::vector<std::uint32_t> documents;

  std::int64_t tokens() const { return static_cast<std::int64_t>(words.size()); }
  // Whether the query at `q` attends the key at `k`.
  bool attends(std::int64_t q, std::int64_t k) const;
};

// Builds a mask span by span, a document at a time. Each bidirectional span is its own modality
// output (its own bit); a causal span attends every earlier token of its document.
class BitfieldMaskBuilder {
 public:
  // Tokens that attend every earlier token of the document (text, or a causal prefix).
  void causal(std::int64_t tokens);
  // Tokens that attend each other and nothing else (an encoder's output); InputError past 61 spans
  // in one document.
  void bidirectional(std::int64_t tokens);
  // Tokens that attend nothing (padding).
  void empty(std::int64_t tokens);
  // Starts the next document of a packed sequence.
  void next_document();

  std::int64_t tokens() const { return mask_.tokens(); }
  BitfieldMask take() { return std::move(mask_); }

 private:
  void append(std::int64_t tokens, std::uint64_t word);

  BitfieldMask mask_;
  std::uint32_t document_ = 0;
  int next_bit_ = 1;  // bit 0 is the text's
};

}  // namespace weft
