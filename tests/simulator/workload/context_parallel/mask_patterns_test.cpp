#include "simulator/workload/context_parallel/mask_patterns.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

namespace weft {
namespace {

// The spans of a mask as its builder laid them out, read back from the words: each maximal run of
// equal (word, document), with what its tokens attend by the generators' own definitions.
struct Span {
  std::int64_t first;
  std::int64_t end;
  std::uint64_t word;
  std::uint32_t document;
};

std::vector<Span> spans_of(const BitfieldMask& mask) {
  std::vector<Span> spans;
  for (std::int64_t i = 0; i < mask.tokens(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (!spans.empty() && spans.back().word == mask.words[at] && spans.back().document == mask.documents[at]) {
      spans.back().end = i + 1;
    } else {
      spans.push_back({i, i + 1, mask.words[at], mask.documents[at]});
    }
  }
  return spans;
}

// Cornstarch's generators (cornstarch/testing/utils.py at 60bf3b0a) line by line, on a dense
// boolean matrix: rows set to attend key ranges, as the Python sets mask[i, a:b] = 1. They draw
// from the same generator in the same order as weft's patterns, each draw uniform in [low, high)
// as torch.randint's.
class DenseGenerators {
 public:
  explicit DenseGenerators(std::uint64_t seed) : random_(seed) {}

  std::vector<std::vector<char>> draw(MaskPattern pattern, std::int64_t n) {
    mask_.assign(static_cast<std::size_t>(n), std::vector<char>(static_cast<std::size_t>(n), 0));
    switch (pattern) {
      case MaskPattern::causal:
        causal_rows(0, 0, n);
        break;
      case MaskPattern::prefix_lm:
        prefix_lm_causal(0, n);
        break;
      case MaskPattern::encoder_embedded:
        encoder_embedded(0, n);
        break;
      case MaskPattern::prefix_lm_document:
        prefix_lm_document(0, n);
        break;
      case MaskPattern::multimodal_packed:
        multimodal_packed(n);
        break;
    }
    return mask_;
  }

 private:
  std::int64_t randint(std::int64_t low, std::int64_t high) {
    if (high <= low) return low;
    return low + static_cast<std::int64_t>(random_() % static_cast<std::uint64_t>(high - low));
  }
  void set(std::int64_t row, std::int64_t from, std::int64_t to) {
    for (std::int64_t k = from; k < to; ++k) mask_[static_cast<std::size_t>(row)][static_cast<std::size_t>(k)] = 1;
  }
  // for i in range(start, end): mask[i, :i + 1] = 1, within a pack at `offset`.
  void causal_rows(std::int64_t offset, std::int64_t start, std::int64_t end) {
    for (std::int64_t i = start; i < end; ++i) set(offset + i, offset, offset + i + 1);
  }
  // mask[start:end, start:end] = 1
  void square(std::int64_t offset, std::int64_t start, std::int64_t end) {
    for (std::int64_t i = start; i < end; ++i) set(offset + i, offset + start, offset + end);
  }
  void prefix_lm_causal(std::int64_t offset, std::int64_t n) {
    const std::int64_t prefix = randint(n / 10, n);
    square(offset, 0, prefix);
    causal_rows(offset, prefix, n);
  }
  void prefix_lm_document(std::int64_t offset, std::int64_t n) {
    const std::int64_t most = n / 16;
    const std::int64_t least = most / 4;
    std::vector<std::pair<std::int64_t, std::int64_t>> blocks;
    std::int64_t position = 0;
    while (position < 9 * n / 10) {  // int(seq_len * 0.9)
      const std::int64_t left = n - position;
      const std::int64_t size = left <= least ? left : randint(least, std::min(most, left) + 1);
      blocks.emplace_back(position, position + size);
      position += size;
    }
    prefix_lm_causal(offset, blocks.front().second);
    for (std::size_t b = 1; b + 1 < blocks.size(); ++b) square(offset, blocks[b].first, blocks[b].second);
    causal_rows(offset, blocks.back().first, n);
  }
  void encoder_embedded(std::int64_t offset, std::int64_t n) {
    const std::int64_t most = n / 16;
    const std::int64_t least = most / 4;
    const std::int64_t first = randint(n / 10, 3 * n / 10);
    causal_rows(offset, 0, first);
    std::int64_t position = first;
    while (10 * position < 9 * n) {  // current_pos < seq_len * 0.9
      const std::int64_t left = n - position;
      const std::int64_t block = left <= least ? left : randint(least, std::min(most, left) + 1);
      square(offset, position, position + block);
      position += block;
      const std::int64_t longest = std::min(n - position, most);
      const std::int64_t text = randint(std::min(least, longest), longest + 1);
      causal_rows(offset, position, position + text);
      position += text;
    }
  }
  void multimodal_packed(std::int64_t n) {
    std::vector<std::int64_t> drawn;
    for (int pack = 0; pack < 4; ++pack) drawn.push_back(randint(n / 10, n / 4));
    const double total = static_cast<double>(drawn[0] + drawn[1] + drawn[2] + drawn[3]);
    std::int64_t offset = 0;
    for (const std::int64_t d : drawn) {
      const auto size = static_cast<std::int64_t>(static_cast<double>(d) / total * static_cast<double>(n));
      switch (randint(0, 3)) {  // prefix_lm_document, prefix_lm_causal, encoder_embedded
        case 0:
          prefix_lm_document(offset, size);
          break;
        case 1:
          prefix_lm_causal(offset, size);
          break;
        default:
          encoder_embedded(offset, size);
          break;
      }
      offset += size;
    }
  }

  std::mt19937_64 random_;
  std::vector<std::vector<char>> mask_;
};

// The number of query-key pairs where the pattern's bitfield mask and the generator's dense mask
// disagree, for a mask drawn from `seed`; -1 if the dense mask attends nothing.
std::int64_t disagreements(MaskPattern pattern, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  const BitfieldMask mask = random_mask(pattern, n, random);
  const std::vector<std::vector<char>> dense = DenseGenerators(seed).draw(pattern, n);
  if (mask.tokens() != n) return n * n;
  std::int64_t differ = 0;
  std::int64_t attending = 0;
  for (std::int64_t q = 0; q < n; ++q) {
    for (std::int64_t k = 0; k < n; ++k) {
      const bool expected = dense[static_cast<std::size_t>(q)][static_cast<std::size_t>(k)] != 0;
      attending += expected ? 1 : 0;
      differ += mask.attends(q, k) != expected ? 1 : 0;
    }
  }
  return attending > 0 ? differ : -1;
}

TEST_CASE("each pattern's bitfield mask is Cornstarch's generator's dense mask", "[context_parallel]") {
  const auto pattern = GENERATE(MaskPattern::causal, MaskPattern::prefix_lm, MaskPattern::encoder_embedded,
                                MaskPattern::prefix_lm_document, MaskPattern::multimodal_packed);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    CHECK(disagreements(pattern, 1024 + 333 * static_cast<std::int64_t>(seed), seed) == 0);
  }
}

TEST_CASE("the document pattern stops where its generator does, at 9/10 rounded down", "[context_parallel]") {
  // 0.9 x 1357 = 1221.3: the generator stops at a document ending at 1221, where a loop comparing
  // with 0.9 n unrounded draws one more. Seeds 126, 144 and 231 draw documents ending there.
  for (const std::uint64_t seed : {126, 144, 231, 1, 2}) {
    INFO("seed " << seed);
    CHECK(disagreements(MaskPattern::prefix_lm_document, 1357, seed) == 0);
  }
}

TEST_CASE("the patterns' spans have the sizes Cornstarch's generators draw", "[context_parallel]") {
  std::mt19937_64 random(11);
  const std::int64_t n = 16384;
  constexpr int kDraws = 20;
  SECTION("ep: a bidirectional prefix of 10% or more, then text") {
    for (int draw = 0; draw < kDraws; ++draw) {
      const std::vector<Span> spans = spans_of(random_mask(MaskPattern::prefix_lm, n, random));
      REQUIRE(spans.size() == 2);
      CHECK((spans[0].word & BitfieldMask::kCausalBit) == 0);
      CHECK(spans[0].end >= n / 10);
    }
  }
  SECTION("ee: text of 10-30%, then encoder outputs of n/64..n/16 tokens, each followed by text, to 90%") {
    for (int draw = 0; draw < kDraws; ++draw) {
      const std::vector<Span> spans = spans_of(random_mask(MaskPattern::encoder_embedded, n, random));
      CHECK(spans[0].end >= n / 10);
      CHECK(spans[0].end < 3 * n / 10);
      int encoders = 0;
      for (const Span& span : spans) {
        if (span.word == 0 || (span.word & BitfieldMask::kCausalBit) != 0) continue;
        ++encoders;
        CHECK(span.end - span.first >= n / 64);
        CHECK(span.end - span.first <= n / 16);
      }
      CHECK(encoders >= 1);
      const Span& last = spans.back();
      CHECK((last.word == 0 || 10 * last.end >= 9 * n));
    }
  }
  SECTION("mp: four documents of 10-25% before scaling, padding for the rounding") {
    for (int draw = 0; draw < kDraws; ++draw) {
      const BitfieldMask mask = random_mask(MaskPattern::multimodal_packed, n, random);
      CHECK(*std::max_element(mask.documents.begin(), mask.documents.end()) <= 4);
      CHECK(std::count(mask.documents.begin(), mask.documents.end(), 4U) <= 4);
      for (std::uint32_t d = 0; d < 4; ++d) {
        const auto size = std::count(mask.documents.begin(), mask.documents.end(), d);
        // n/10 drawn against the most the other three can be drawn: 3 (n/4 - 1).
        CHECK(size >= n / 10 * n / (n / 10 + 3 * (n / 4)) - 1);
      }
    }
  }
}

}  // namespace
}  // namespace weft
