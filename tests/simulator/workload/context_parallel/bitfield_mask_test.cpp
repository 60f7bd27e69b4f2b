#include "simulator/workload/context_parallel/bitfield_mask.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "simulator/core/input_error.hpp"
#include "simulator/workload/context_parallel/mask_patterns.hpp"

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

// The dense rule of Cornstarch's generators: a causal token attends every earlier token of its
// document that is not padding, an encoder's token the tokens of its own span, padding nothing.
// `span_of` holds each token's span.
bool dense_rule(const std::vector<Span>& spans, const std::vector<std::size_t>& span_of, std::int64_t q,
                std::int64_t k) {
  const std::size_t qs = span_of[static_cast<std::size_t>(q)];
  const std::size_t ks = span_of[static_cast<std::size_t>(k)];
  const Span& query = spans[qs];
  const Span& key = spans[ks];
  if (query.word == 0 || key.word == 0 || query.document != key.document) return false;
  if ((query.word & BitfieldMask::kCausalBit) != 0) return k <= q;
  return qs == ks;
}

TEST_CASE("a bitfield mask: causal text, an encoder's output, padding and packed documents", "[context_parallel]") {
  BitfieldMaskBuilder builder;
  builder.causal(2);         // 0-1: text
  builder.bidirectional(3);  // 2-4: an image
  builder.causal(2);         // 5-6: text
  builder.empty(1);          // 7: padding
  builder.next_document();
  builder.causal(2);  // 8-9: the next packed sequence's text
  const BitfieldMask mask = builder.take();
  REQUIRE(mask.tokens() == 10);
  CHECK(mask.attends(1, 0));
  CHECK(mask.attends(1, 1));
  CHECK_FALSE(mask.attends(0, 1));  // causal
  CHECK(mask.attends(2, 4));        // the image attends itself both ways
  CHECK(mask.attends(4, 2));
  CHECK_FALSE(mask.attends(3, 1));  // but not the text before it
  CHECK(mask.attends(5, 3));        // text after the image attends it
  CHECK_FALSE(mask.attends(4, 5));
  CHECK_FALSE(mask.attends(7, 7));  // padding attends nothing
  CHECK_FALSE(mask.attends(6, 7));  // and nothing attends it
  CHECK(mask.attends(9, 8));
  CHECK_FALSE(mask.attends(8, 6));  // documents apart
}

TEST_CASE("a document has at most 61 encoder spans, one bit each", "[context_parallel]") {
  BitfieldMaskBuilder builder;
  for (int i = 0; i < BitfieldMask::kModalityBits - 1; ++i) builder.bidirectional(1);
  CHECK_THROWS_AS(builder.bidirectional(1), InputError);
  builder.next_document();
  CHECK_NOTHROW(builder.bidirectional(1));
  const BitfieldMask mask = builder.take();
  CHECK_FALSE(mask.attends(0, 1));  // two spans of one document: two bits
}

TEST_CASE("each pattern's bitfield mask is its generator's dense mask", "[context_parallel]") {
  const auto pattern = GENERATE(MaskPattern::causal, MaskPattern::prefix_lm, MaskPattern::encoder_embedded,
                                MaskPattern::prefix_lm_document, MaskPattern::multimodal_packed);
  std::mt19937_64 random(7);
  for (int draw = 0; draw < 3; ++draw) {
    const std::int64_t n = 1024 + 320 * draw;
    const BitfieldMask mask = random_mask(pattern, n, random);
    REQUIRE(mask.tokens() == n);
    const std::vector<Span> spans = spans_of(mask);
    std::vector<std::size_t> span_of;
    for (std::size_t s = 0; s < spans.size(); ++s) span_of.insert(span_of.end(), spans[s].end - spans[s].first, s);
    std::int64_t disagreements = 0;
    for (std::int64_t q = 0; q < n; ++q) {
      for (std::int64_t k = 0; k < n; ++k) {
        disagreements += mask.attends(q, k) != dense_rule(spans, span_of, q, k) ? 1 : 0;
      }
    }
    CHECK(disagreements == 0);
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
