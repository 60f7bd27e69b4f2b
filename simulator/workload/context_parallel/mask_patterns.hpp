#pragma once

#include <cstdint>
#include <random>

#include "simulator/core/enum_names.hpp"
#include "simulator/workload/context_parallel/bitfield_mask.hpp"

namespace weft {

// The random multimodal attention masks of Cornstarch's context-parallel evaluation (papers/004
// §6.5, Figure 11; the generators of cornstarch/testing/utils.py in cornstarch-org/Cornstarch at
// 60bf3b0a, which Table 4's profiler draws from). The number of tokens of each span is drawn per
// mask; `max_block` below is a sequence's length / 16 and `min_block` a quarter of it.
//  - causal: every token attends every earlier one (a text-only LLM);
//  - prefix_lm (EP, encoder outputs prepended): a bidirectional prefix of 10-100% of the tokens,
//    then causal text;
//  - encoder_embedded (EE): causal text of 10-30%, then, up to 90% of the sequence, encoder
//    outputs of min_block..max_block tokens, each followed by causal text of as many; the rest
//    of the tokens attend nothing;
//  - prefix_lm_document: bidirectional documents of min_block..max_block tokens up to 90% of the
//    sequence, the first a prefix_lm of its own, the last causal text to the end;
//  - multimodal_packed (MP): four sequences of 10-25% (scaled to fill it), each prefix_lm,
//    encoder_embedded or prefix_lm_document at random, none attending another.
enum class MaskPattern : std::uint8_t { causal, prefix_lm, encoder_embedded, prefix_lm_document, multimodal_packed };

inline constexpr EnumNames<MaskPattern, 5> kMaskPatternNames({"causal", "ep", "ee", "document", "mp"});

// The generator of the `index`-th mask of `pattern` over `tokens` tokens for `seed`: a mask depends
// on these alone, not on which other masks are drawn.
std::mt19937_64 mask_random(std::uint64_t seed, MaskPattern pattern, std::int64_t tokens, int index);

// A mask of `pattern` over `tokens` tokens, drawn from `random`.
BitfieldMask random_mask(MaskPattern pattern, std::int64_t tokens, std::mt19937_64& random);

}  // namespace weft
