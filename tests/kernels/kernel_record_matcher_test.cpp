#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "kernels/kernel_record_matcher.hpp"

namespace weft {
namespace {

// One record as a tracer delivers it: an interval or a link, keyed by correlation id.
struct TracerRecord {
  bool is_link;
  std::uint32_t correlation;
  std::uint64_t a;  // the span (link) or the start (interval)
  std::uint64_t b;  // the end (interval)
};

void deliver(KernelRecordMatcher& matcher, const TracerRecord& r) {
  if (r.is_link) {
    matcher.add_link(r.correlation, r.a);
  } else {
    matcher.add_interval(r.correlation, r.a, r.b);
  }
}

TEST_CASE("records in any order and over several buffers join into each span's kernel extent and busy time",
          "[kernels][cupti]") {
  std::mt19937 random(7);
  std::vector<TracerRecord> records;
  std::map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> expected;  // span -> (first start, last end)
  std::map<std::uint32_t, std::vector<bool>> ran;  // span -> per nanosecond, whether a kernel of it ran
  std::uint32_t correlation = 100;
  for (std::uint32_t span = 1; span <= 40; ++span) {
    const int calls = 1 + static_cast<int>(random() % 3);  // API calls under the span
    for (int c = 0; c < calls; ++c, ++correlation) {
      records.push_back({true, correlation, span, 0});
      const int kernels = 1 + static_cast<int>(random() % 3);  // kernels one call launched
      for (int k = 0; k < kernels; ++k) {
        const std::uint64_t start = 1000 * span + random() % 500;
        const std::uint64_t end = start + 1 + random() % 400;
        records.push_back({false, correlation, start, end});
        std::vector<bool>& marks = ran[span];
        marks.resize(1000 * 42, false);
        for (std::uint64_t t = start; t < end; ++t) marks[t] = true;
        auto [it, inserted] =
            expected.try_emplace(span, static_cast<std::int64_t>(start), static_cast<std::int64_t>(end));
        it->second.first = std::min<std::int64_t>(it->second.first, static_cast<std::int64_t>(start));
        it->second.second = std::max<std::int64_t>(it->second.second, static_cast<std::int64_t>(end));
      }
    }
  }
  std::shuffle(records.begin(), records.end(), random);
  KernelRecordMatcher matcher;
  // The tracer hands its buffers over one after another; together they hold the records in this order.
  for (const TracerRecord& r : records) deliver(matcher, r);
  const std::vector<TimedSpan> spans = matcher.take();
  REQUIRE(spans.size() == expected.size());
  for (const TimedSpan& span : spans) {
    INFO("span " << span.id);
    CHECK(span.start_ns == expected.at(span.id).first);
    CHECK(span.end_ns == expected.at(span.id).second);
    const std::vector<bool>& marks = ran.at(span.id);
    CHECK(span.busy_ns == std::count(marks.begin(), marks.end(), true));
  }
  CHECK(matcher.pending() == 0);
}

TEST_CASE("a record delivered after its collection joins its span in the next one", "[kernels][cupti]") {
  KernelRecordMatcher matcher;
  matcher.add_link(5, 42);
  matcher.add_interval(6, 10, 20);  // a kernel whose link comes later
  CHECK(matcher.take().empty());
  CHECK(matcher.pending() == 2);
  matcher.add_interval(5, 100, 150);
  matcher.add_link(6, 43);
  const std::vector<TimedSpan> spans = matcher.take();
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].id == 42);
  CHECK(spans[0].start_ns == 100);
  CHECK(spans[0].end_ns == 150);
  CHECK(spans[0].busy_ns == 50);
  CHECK(spans[1].id == 43);
  CHECK(spans[1].start_ns == 10);
  CHECK(spans[1].end_ns == 20);
}

TEST_CASE("a record never joined is dropped after two collections", "[kernels][cupti]") {
  KernelRecordMatcher matcher;
  matcher.add_link(1, 9);         // an API call that launched nothing
  matcher.add_interval(2, 5, 6);  // a kernel whose call was not traced
  matcher.take();
  CHECK(matcher.pending() == 2);
  matcher.take();
  CHECK(matcher.pending() == 0);
  matcher.add_interval(1, 7, 8);  // too late: its link is gone
  CHECK(matcher.take().empty());
}

}  // namespace
}  // namespace weft
