#include "simulator/workload/context_parallel/bitfield_mask.hpp"

#include <catch2/catch.hpp>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

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

}  // namespace
}  // namespace weft
