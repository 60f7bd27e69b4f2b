#include "simulator/workload/context_parallel/mask_patterns.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace weft {
namespace {

// Uniform in [low, high), as torch.randint draws; `low` when the range is empty.
std::int64_t draw_between(std::mt19937_64& random, std::int64_t low, std::int64_t high) {
  if (high <= low) return low;
  return low + static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(high - low));
}

struct Blocks {
  std::int64_t max;  // a sequence's length / 16
  std::int64_t min;  // a quarter of it
  explicit Blocks(std::int64_t tokens) : max(tokens / 16), min(tokens / 64) {}

  // The next span from `position` of a sequence of `tokens`: what is left when that is at most
  // `min`, else min..max tokens (at most what is left).
  std::int64_t draw(std::mt19937_64& random, std::int64_t position, std::int64_t tokens) const {
    const std::int64_t left = tokens - position;
    if (left <= min) return left;
    return draw_between(random, min, std::min(max, left) + 1);
  }
};

bool below_nine_tenths(std::int64_t position, std::int64_t tokens) { return 10 * position < 9 * tokens; }

void prefix_lm(BitfieldMaskBuilder& mask, std::int64_t tokens, std::mt19937_64& random) {
  const std::int64_t prefix = draw_between(random, tokens / 10, tokens);
  mask.bidirectional(prefix);
  mask.causal(tokens - prefix);
}

void encoder_embedded(BitfieldMaskBuilder& mask, std::int64_t tokens, std::mt19937_64& random) {
  const Blocks blocks(tokens);
  std::int64_t position = draw_between(random, tokens / 10, 3 * tokens / 10);
  mask.causal(position);
  while (below_nine_tenths(position, tokens)) {
    const std::int64_t encoder = blocks.draw(random, position, tokens);
    mask.bidirectional(encoder);
    position += encoder;
    const std::int64_t most = std::min(tokens - position, blocks.max);
    const std::int64_t text = draw_between(random, std::min(blocks.min, most), most + 1);
    mask.causal(text);
    position += text;
  }
  mask.empty(tokens - position);
}

void prefix_lm_document(BitfieldMaskBuilder& mask, std::int64_t tokens, std::mt19937_64& random) {
  const Blocks blocks(tokens);
  const std::int64_t end = mask.tokens() + tokens;
  std::vector<std::int64_t> sizes;
  std::int64_t position = 0;
  while (position < 9 * tokens / 10) {
    sizes.push_back(blocks.draw(random, position, tokens));
    position += sizes.back();
  }
  // The first document is a prefix LM of its own; the last is text attending everything before it,
  // to the end of the sequence.
  prefix_lm(mask, sizes.front(), random);
  for (std::size_t i = 1; i + 1 < sizes.size(); ++i) mask.bidirectional(sizes[i]);
  mask.causal(end - mask.tokens());
}

void multimodal_packed(BitfieldMaskBuilder& mask, std::int64_t tokens, std::mt19937_64& random) {
  constexpr int kPacks = 4;
  std::array<std::int64_t, kPacks> drawn{};
  for (std::int64_t& size : drawn) size = draw_between(random, tokens / 10, tokens / 4);
  const double total = static_cast<double>(drawn[0] + drawn[1] + drawn[2] + drawn[3]);
  for (int pack = 0; pack < kPacks; ++pack) {
    const auto size = static_cast<std::int64_t>(static_cast<double>(drawn[pack]) / total * static_cast<double>(tokens));
    if (pack > 0) mask.next_document();
    switch (draw_between(random, 0, 3)) {
      case 0:
        prefix_lm_document(mask, size, random);
        break;
      case 1:
        prefix_lm(mask, size, random);
        break;
      default:
        encoder_embedded(mask, size, random);
        break;
    }
  }
  mask.next_document();
  mask.empty(tokens - mask.tokens());  // what the packs' rounding leaves
}

}  // namespace

std::mt19937_64 mask_random(std::uint64_t seed, MaskPattern pattern, std::int64_t tokens, int index) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed),         static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(pattern),      static_cast<std::uint32_t>(tokens),
                         static_cast<std::uint32_t>(tokens >> 32), static_cast<std::uint32_t>(index)};
  return std::mt19937_64(sequence);
}

BitfieldMask random_mask(MaskPattern pattern, std::int64_t tokens, std::mt19937_64& random) {
  BitfieldMaskBuilder mask;
  switch (pattern) {
    case MaskPattern::causal:
      mask.causal(tokens);
      break;
    case MaskPattern::prefix_lm:
      prefix_lm(mask, tokens, random);
      break;
    case MaskPattern::encoder_embedded:
      encoder_embedded(mask, tokens, random);
      break;
    case MaskPattern::prefix_lm_document:
      prefix_lm_document(mask, tokens, random);
      break;
    case MaskPattern::multimodal_packed:
      multimodal_packed(mask, tokens, random);
      break;
  }
  return mask.take();
}

}  // namespace weft
